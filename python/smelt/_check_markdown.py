"""``check-model --markdown``: the agreement tables of docs/reference-model.md, configs x terms, generated."""

from __future__ import annotations

import os

PARAM_COLUMNS = (
    "embedding",
    "lm_head",
    "attention",
    "norms",
    "router",
    "experts",
    "shared_experts",
    "dense_ffn",
    "total",
)
FLOP_COLUMNS = (
    ("forward", "attention_qkv", "qkv"),
    ("forward", "attention_out", "out"),
    ("forward", "attention_core (flop-counter)", "core, T x T"),
    ("forward", "attention_scores + values", "core, causal"),
    ("forward", "router", "router"),
    ("forward", "experts", "experts"),
    ("forward", "shared_experts", "shared"),
    ("forward", "dense_ffn", "dense"),
    ("forward", "lm_head", "lm_head"),
    ("forward", "total", "forward"),
    ("training", "total", "training"),
    ("kv", "slots", "KV slots"),
    ("kv", "bytes_at_context", "KV bytes"),
)


def _name(path: str) -> str:
    """A config's name in the table: its path below the last `examples` folder, else the path given."""
    parts = os.path.normpath(path).split(os.sep)
    if "examples" in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index("examples")
        return "/".join(parts[last + 1 :])
    return path


def _cell(rows: dict, key: tuple[str, str]) -> str:
    r = rows.get(key)
    if r is None:
        return ""
    v = r.measured
    text = f"{int(v):,}" if float(v).is_integer() else f"{v:,.3f}"
    return text if r.exact else f"**{text}** (smelt {r.smelt:,})"


def _agreement(m) -> str:
    bad = sum(not r.exact for r in m.rows)
    return "exact" if not bad else f"{bad} of {len(m.rows)} differ"


def markdown(done: list, shrunk: bool) -> str:
    """Two tables (parameters; FLOPs per token and KV at the context), a row per measured config, and a line
    per config the model does not build. Every cell is the measured value; a bold one differs from smelt's
    (given beside it). An "mtp" column appears where a config has MTP modules."""
    built = [(p, m) for p, m, _ in done if m is not None]
    mtp = any(r.term == "mtp" for _, m in built for r in m.rows)  # a column only where a config has MTP modules
    params = PARAM_COLUMNS + (("mtp",) if mtp else ())
    flops = FLOP_COLUMNS[:9] + ((("forward", "mtp", "mtp"),) if mtp else ()) + FLOP_COLUMNS[9:]
    how = "shrunk, " if shrunk else ""
    out = [f"Parameters ({how}elements), `sum(p.numel())` per term; the last column covers every row of both tables:"]
    out += ["", "| config | " + " | ".join(params) + " | all terms |"]
    out.append("|---|" + "---:|" * len(params) + "---|")
    for p, m in built:
        rows = {(r.part, r.term): r for r in m.rows}
        cells = [_cell(rows, ("params", k)) for k in params]
        out.append(f"| `{_name(p)}` | " + " | ".join(cells) + f" | {_agreement(m)} |")
    out += [
        "",
        "FLOPs per token of a forward of T tokens (FlopCounterMode; the attention core also on smelt's causal "
        "convention), training (forward + backward) and the prefill KV cache (slots, bytes) after T tokens:",
        "",
    ]
    out.append("| config | T | visits | " + " | ".join(c for _, _, c in flops) + " |")
    out.append("|---|---:|---:|" + "---:|" * len(flops))
    for p, m in built:
        rows = {(r.part, r.term): r for r in m.rows}
        cells = [_cell(rows, (part, term)) for part, term, _ in flops]
        out.append(f"| `{_name(p)}` | {m.context} | {m.layers_executed} | " + " | ".join(cells) + " |")
    missing = [(p, f) for p, m, f in done if m is None]
    if missing:
        out += ["", "Not built (the model raises `NotImplementedError` naming the feature):", ""]
        out += [f"- `{_name(p)}`: {f}" for p, f in missing]
    return "\n".join(out)
