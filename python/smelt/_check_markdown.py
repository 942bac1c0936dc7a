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
    per config the model does not build. Every cell is the measured value; a bold one differs from smelt's."""
    built = [(p, m) for p, m, _ in done if m is not None]
    how = "shrunk, " if shrunk else ""
    out = [f"Parameters ({how}elements), `sum(p.numel())` per term:", ""]
    out.append("| config | " + " | ".join(PARAM_COLUMNS) + " | |")
    out.append("|---|" + "---:|" * len(PARAM_COLUMNS) + "---|")
    for p, m in built:
        rows = {(r.part, r.term): r for r in m.rows}
        cells = [_cell(rows, ("params", k)) for k in PARAM_COLUMNS]
        out.append(f"| `{_name(p)}` | " + " | ".join(cells) + f" | {_agreement(m)} |")
    ts = sorted({m.context for _, m in built})
    at = f"T = {ts[0]}" if len(ts) == 1 else "the context of each row"
    out += ["", f"FLOPs per token at {at} (FlopCounterMode; the attention core also converted to smelt's causal "
            f"convention) and the prefill KV cache at {at}:", ""]
    out.append("| config | visits | " + " | ".join(c for _, _, c in FLOP_COLUMNS) + " |")
    out.append("|---|---:|" + "---:|" * len(FLOP_COLUMNS))
    for p, m in built:
        rows = {(r.part, r.term): r for r in m.rows}
        cells = [_cell(rows, (part, term)) for part, term, _ in FLOP_COLUMNS]
        out.append(f"| `{_name(p)}` | {m.layers_executed} | " + " | ".join(cells) + " |")
    missing = [(p, f) for p, m, f in done if m is None]
    if missing:
        out += ["", "Not built (the model raises `NotImplementedError` naming the feature):", ""]
        out += [f"- `{_name(p)}`: {f}" for p, f in missing]
    return "\n".join(out)
