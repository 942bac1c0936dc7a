"""``python -m smelt check-model``: smelt's counts beside the reference model's, term by term.

Every option and config is checked before any model runs, so a bad input prints nothing on standard output.
torch is imported only here, when the command runs (docs/reference-model.md, "check-model").
"""

from __future__ import annotations

import argparse
import json

import smelt

from . import _core

# Without --shrink, a config is built at full size: float32 weights, 4 bytes each, plus the Python loop over
# the experts. 50 M parameters (200 MB of weights) runs in seconds on a CPU; above it, check a tiny copy.
MAX_PARAMS = 50_000_000
# A shrunk copy keeps the counts of layers and experts, so it can stay large: the largest shrunk example
# (DeepSeek-V3, 168 M parameters) takes about 13 s; a copy of a config with 50,000 experts per layer would not.
MAX_SHRUNK_PARAMS = 250_000_000
MAX_SEED = 2**63 - 1
DEFAULT_CONTEXT = 16
EXIT_DISAGREE = 3


# The reference attention multiplies full T x T scores and keeps, per head and visit, the scores, their masked
# copy and the probabilities (float32) for the backward: 12 bytes per (head, query, key) pair.
MAX_SCORE_BYTES = 2 * 2**30


def _score_bytes(cfg: dict, report: dict, t: int) -> int:
    visits = report["layers_executed"] + cfg.get("mtp_modules", 0)
    return 12 * cfg["attention"]["num_heads"] * t * t * visits


# Each output head (the LM head, and each MTP module's) gives T x V float32 logits, kept with their gradient: 8
# bytes per (token, vocabulary entry); measured 7.8 (1.5 GB more peak memory at T = 256 than at T = 64, V = 10^6).
def _logit_bytes(cfg: dict, t: int) -> int:
    return 8 * t * cfg["vocab_size"] * (1 + cfg.get("mtp_modules", 0))


# Per token and layer visit the backward keeps about 10 H + 3 (q + 2 kv) + 4 F floats (norms and residuals,
# the projections, the FFN's gate, up, activation and product; F the widths a token runs through). Two layers of
# H = 1,024 looped 512 times: 23,552 estimated, 24,500 measured (2.4 GB more peak memory at T = 32 than at 8).
def _activations_per_token(cfg: dict, report: dict) -> int:
    a, moe, h = cfg["attention"], cfg.get("moe") or {}, cfg["hidden_size"]
    if a["type"] == "mla":
        qk, v = a["num_heads"] * (a["qk_nope_head_dim"] + a["qk_rope_head_dim"]), a["num_heads"] * a["v_head_dim"]
        att = 2 * qk + v + a["q_lora_rank"] + a["kv_lora_rank"] + a["qk_rope_head_dim"]
    else:
        att = (a["num_heads"] + 2 * a["num_kv_heads"]) * a["head_dim"]
    routed = moe.get("top_k", 0) * moe.get("expert_width", 0) + moe.get("num_shared_experts", 0) * moe.get(
        "shared_width", 0
    )
    width = {"moe": routed + moe.get("num_experts", 0), "dense": cfg["ffn"]["dense_width"]}
    visits = [(x["kind"], x["count"] * x["visits"]) for x in report["layer_runs"]]
    visits.append((_last_kind(report), cfg.get("mtp_modules", 0)))  # the MTP modules' layers: shaped like the last
    return sum(n * (10 * h + 3 * att + 4 * width[kind]) for kind, n in visits)


def _last_kind(report: dict) -> str:
    """The kind of the last layer: of the run that ends there."""
    return max(report["layer_runs"], key=lambda run: run["last"])["kind"]


# The model builds one nn.Module per expert (so each runs on its routed tokens only), about 0.4 ms and 15 KB
# each: 100,000 experts in one layer took 21 s to build on the meta device and 16 s more with weights (1.6 GB).
# Shrinking keeps the expert count, so this limit holds with --shrink too; the examples stay under 15,200.
MAX_EXPERT_MODULES = 50_000


# Each layer visit is a Python call under FlopCounterMode, forward and backward: about 10 ms on a CPU (tiny-moe's
# span looped 1,024 times, 2,050 visits, took 22 s). The examples execute at most 192 (Ouro-2.6B, 48 x 4).
MAX_VISITS = 4096


def _expert_modules(cfg: dict, report: dict) -> tuple[int, int, int, int]:
    """(expert modules, routed and shared experts per layer, MoE layers): the MTP modules' layers are shaped like
    the last layer, so they count when it is MoE."""
    moe = cfg.get("moe") or {}
    moe_layers = sum(run["count"] for run in report["layer_runs"] if run["kind"] == "moe")
    layers = moe_layers + (cfg.get("mtp_modules", 0) if _last_kind(report) == "moe" else 0)
    e, s = moe.get("num_experts", 0), moe.get("num_shared_experts", 0)
    return (e + s) * layers, e, s, layers


class CheckError(Exception):
    """Bad input (exit code 2): an option, a config, a feature the reference model does not build."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="+", metavar="CONFIG", help="native JSON or Hugging Face config.json")
    p.add_argument("--shrink", action="store_true", help="check smelt.torch.shrink(CONFIG): tiny widths, ratios kept")
    p.add_argument(
        "--context",
        type=int,
        metavar="T",
        help="tokens of the measured forward (default 16, or the context_length if smaller)",
    )
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the random weights and tokens (default 0)")
    p.add_argument("--json", action="store_true", help="ordered JSON: one object, an array for several configs")
    p.add_argument("--markdown", action="store_true", help="the agreement tables of docs/reference-model.md")


def _fmt(v: int | float) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f"{v:,}" if isinstance(v, int) else f"{v:,.3f}"


def _diff(r) -> str:
    if r.exact:
        return "exact"
    d = r.measured - r.smelt
    return f"diff {'+' if d > 0 else ''}{_fmt(d)}"


def _prepare(args: argparse.Namespace) -> list[tuple[str, dict | None, str | None, int | None, str]]:
    """(path, config, feature not built, context, name) per CONFIG; every input checked before anything runs."""
    t = args.context
    if t is not None and t < 1:
        raise CheckError(f"--context = {t}: must be at least 1")
    if not 0 <= args.seed <= MAX_SEED:
        raise CheckError(f"--seed = {args.seed}: must be between 0 and {MAX_SEED}")
    if args.json and args.markdown:
        raise CheckError("--json and --markdown: choose one")
    try:
        import torch  # noqa: F401  (lazily: only this command needs it)
    except ImportError as e:
        if (e.name or "").split(".")[0] != "torch":
            raise
        raise CheckError(f"check-model needs torch (pip install torch==2.5.1; docs/reference-model.md): {e}") from e
    from . import torch as st

    out: list = []
    names: dict[int, str] = {}
    for path in args.config:
        try:
            cfg = smelt.read_config(path).to_dict()
            # Named by its path when unnamed, as smelt-match count names it. The model is built and counted under
            # the name cut as the CLI's tables cut it: a 60 MB name would cost every copy and parse of the config
            # (seconds each). --json gives the whole name back, as smelt-match's JSON reports keep it.
            names[len(out)] = cfg["name"] or path
            cfg["name"] = _core.name_excerpt(names[len(out)])
            cfg = st.shrink(cfg) if args.shrink else cfg
        except smelt.ConfigError as e:
            raise CheckError(str(e)) from e
        n = cfg["context_length"]
        if t is not None and t > n:
            whose = "the shrunk copy's" if args.shrink else "the config's"
            raise CheckError(f"--context = {t}: must be at most {whose} context_length = {n} ('{path}')")
        used = t or min(DEFAULT_CONTEXT, n)
        report = smelt.count(cfg).to_dict()
        scores = _score_bytes(cfg, report, used)
        if scores > MAX_SCORE_BYTES:
            raise CheckError(
                f"--context = {used}: the reference model keeps the full T x T attention scores of every visit for "
                f"the backward, about {scores / 2**30:.1f} GiB for '{path}', more than the "
                f"{MAX_SCORE_BYTES // 2**30} GiB check-model allows: use a smaller --context"
            )
        logits = _logit_bytes(cfg, used)
        if logits > MAX_SCORE_BYTES:
            raise CheckError(
                f"--context = {used}: the reference model keeps the logits of every output head (the LM head and "
                "each MTP module's) and their gradients for the backward, 8 bytes per token and vocabulary entry, "
                f"about {logits / 2**30:.1f} GiB for '{path}', more than the {MAX_SCORE_BYTES // 2**30} GiB "
                "check-model allows: use a smaller --context"
            )
        per_token = _activations_per_token(cfg, report)
        if 4 * used * per_token > MAX_SCORE_BYTES:
            raise CheckError(
                f"--context = {used}: the reference model keeps about {per_token:,} activations per token (each "
                "layer visit's norms, projections and FFN widths) for the backward, about "
                f"{4 * used * per_token / 2**30:.1f} GiB for '{path}', more than the {MAX_SCORE_BYTES // 2**30} GiB "
                "check-model allows: use a smaller --context"
            )
        p = report["params"]
        size = p["total"] + p["mtp"]
        if not args.shrink and size > MAX_PARAMS:
            raise CheckError(
                f"'{path}' has {size:,} parameters, more than the {MAX_PARAMS:,} check-model builds at full size "
                f"(about {4 * size / 2**30:.1f} GiB of float32 weights): add --shrink to check a tiny copy "
                "with the same ratios"
            )
        if args.shrink and size > MAX_SHRUNK_PARAMS:
            experts = (cfg.get("moe") or {}).get("num_experts", 0)
            raise CheckError(
                f"'{path}' shrunk still has {size:,} parameters, more than the {MAX_SHRUNK_PARAMS:,} check-model "
                f"builds (about {4 * size / 2**30:.1f} GiB of float32 weights): shrink divides the widths but keeps "
                f"the {cfg['num_layers']} layers and {experts} experts; check a config with fewer"
            )
        visits = report["layers_executed"] + cfg.get("mtp_modules", 0)
        if visits > MAX_VISITS:
            raise CheckError(
                f"'{path}' executes {visits:,} layer visits ({report['layers_stored']:,} layers stored), more than "
                f"the {MAX_VISITS:,} check-model runs (about 10 ms each on a CPU): check a config with fewer layers "
                "or a smaller loop.count"
            )
        modules, routed, shared, layers = _expert_modules(cfg, report)
        if modules > MAX_EXPERT_MODULES:
            raise CheckError(
                f"'{path}' has {modules:,} expert modules ({routed:,} routed and {shared:,} shared experts in each "
                f"of {layers:,} MoE layers), more than the {MAX_EXPERT_MODULES:,} check-model builds (one nn.Module "
                "each, about 0.4 ms and 15 KB): check a config with fewer experts or MoE layers"
            )
        try:
            st.build_model(cfg, device="meta")  # a feature the model does not build is named here, before any run
            out.append((path, cfg, None, used, names[len(out)]))
        except NotImplementedError as e:
            if not args.markdown:
                raise CheckError(str(e)) from e
            out.append((path, None, str(e), None, names[len(out)]))
    return out


def _table(path: str, m, shrunk: bool) -> str:
    head = (
        f"check-model {m.model} ('{path}'{', shrunk' if shrunk else ''}): context {m.context} tokens, seed {m.seed}, "
        f"{m.layers_stored} layers stored, {m.layers_executed} executed\n"
        "params in elements, FLOPs per token, kv bytes at the context (slots: cache entries)\n"
    )
    rows = [("part", "term", "smelt", "measured", "")]
    rows += [(r.part, r.term, _fmt(r.smelt), _fmt(r.measured), _diff(r)) for r in m.rows]
    w = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"{a:<{w[0]}}  {b:<{w[1]}}  {c:>{w[2]}}  {d:>{w[3]}}  {e}".rstrip() for a, b, c, d, e in rows]
    bad = [f"{r.part}.{r.term}" for r in m.rows if not r.exact]
    n = len(m.rows)
    tail = f"all {n} terms agree" if not bad else f"{len(bad)} of {n} terms differ: {', '.join(bad)}"
    return head + "\n".join(lines) + "\n" + tail


def _record(path: str, m, shrunk: bool, name: str) -> dict:
    d = {"schema_version": 1, "kind": "check-model", "config": path, "shrunk": shrunk}
    d.update(m.to_dict())
    d["model"] = name
    return d


def run(args: argparse.Namespace) -> int:
    """Prints the comparison; 0 when every term agrees, EXIT_DISAGREE when one does not."""
    inputs = _prepare(args)
    import torch

    from . import torch as st

    # One thread: the models are tiny, and intra-op threads only make each small product wait (on 2 busy
    # cores a shrunk config took 21 s with torch's default threads, 1.5 s with one).
    torch.set_num_threads(1)
    from ._check_markdown import markdown

    done = []
    for path, cfg, feature, t, _ in inputs:
        m = st.measure(cfg, context=t, seed=args.seed) if cfg is not None else None
        done.append((path, m, feature))
    measured = [m for _, m, _ in done if m is not None]
    if args.markdown:
        print(markdown(done, args.shrink))
    elif args.json:
        records = [_record(p, m, args.shrink, given[4]) for (p, m, _), given in zip(done, inputs)]
        print(json.dumps(records[0] if len(records) == 1 else records, indent=2))
    else:
        print("\n\n".join(_table(p, m, args.shrink) for p, m, _ in done))
    return 0 if all(m.agree for m in measured) else EXIT_DISAGREE
