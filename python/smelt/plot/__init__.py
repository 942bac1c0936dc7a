"""Plots of smelt-match's JSON reports (docs/plots.md), with matplotlib.

Each ``plot_*`` function takes a report (a dict, or the path of a file written by ``smelt-match ... --json``),
checks it (ReportError, listing every violation, on bad input) and returns a matplotlib Figure; ``save`` writes
a figure to .png or .svg atomically. A report is read by smelt._report.read_json, the package's one reader of
report JSON, and checked here (_inputs.py); the frontier plot's curves are the library's (_laws.py, through the
extension). The figures are drawn without pyplot, so no display or backend is needed (the Agg canvas renders
them). ReportError is smelt.Error's kind for a report that cannot be plotted.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from .._errors import ReportError
from . import _inputs
from ._laws import check_agreement, frontier_laws

__all__ = [
    "KINDS",
    "ReportError",
    "plot",
    "plot_frontier",
    "plot_layers",
    "plot_mismatch",
    "plot_sweep",
    "output_format",
    "save",
]

BUDGET_LABELS = {
    "flops_per_token": "FLOPs per token",
    "params_non_embedding": "parameters (non-embedding)",
    "kv_bytes_per_token": "KV cache bytes per token",
}
_COLORS = matplotlib.colormaps["tab10"].colors


def plot_mismatch(report: Any) -> Figure:
    """The three budgets' mismatch (percent, signed) of the best candidate and the alternatives of a derive
    report, one panel per matched context, with the tolerance band. Unmatched budgets are hatched."""
    m = _inputs.read_match(report)
    fig = Figure(figsize=(max(6.0, 1.6 * len(m.candidates) + 4.0), 1.4 + 2.8 * len(m.contexts)), layout="constrained")
    axes = fig.subplots(len(m.contexts), 1, squeeze=False, sharex=True)[:, 0]
    width = 0.8 / len(_inputs.BUDGETS)
    for ci, (ax, context) in enumerate(zip(axes, m.contexts)):
        ax.axhspan(
            -m.tolerance_pct, m.tolerance_pct, color="tab:green", alpha=0.12, label=f"tolerance ±{m.tolerance_pct:g}%"
        )
        ax.axhline(0.0, color="black", linewidth=0.8)
        for bi, budget in enumerate(_inputs.BUDGETS):
            matched = budget in m.matched
            heights = [c.mismatch[ci][budget] for c in m.candidates]
            xs = [i + (bi - 1) * width for i in range(len(m.candidates))]
            bars = ax.bar(
                xs,
                heights,
                width,
                color=_COLORS[bi],
                hatch=None if matched else "//",
                alpha=1.0 if matched else 0.45,
                label=BUDGET_LABELS[budget] + ("" if matched else " (not matched)"),
            )
            ax.bar_label(bars, fmt="%+.2f%%", fontsize=7, padding=2)
        ax.set_ylabel("mismatch (%)")
        ax.set_title(f"context {context} tokens", fontsize=9, loc="left")
        ax.margins(y=0.25)
    axes[-1].set_xticks(range(len(m.candidates)), [candidate_label(c) for c in m.candidates], fontsize=8)
    axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    verdict = "within" if m.within_tolerance else "outside"
    fig.suptitle(
        f"{m.baseline}: budget mismatch of the derived candidates\n(the best is {verdict} the "
        f"{m.tolerance_pct:g}% tolerance)",
        fontsize=10,
    )
    return fig


def candidate_label(c: _inputs.Candidate) -> str:
    k = c.knobs
    attention = f"{k['num_heads']}/{k['num_kv_heads']}/{k['head_dim']}" if k["head_dim"] else f"{k['num_heads']}/MLA"
    return f"{c.name}\nH {k['hidden_size']}, E {k['num_experts']}, {attention}"


def plot_frontier(report: Any, laws: Sequence[str] | None = None, points: int = 241) -> Figure:
    """Loss against training compute (FLOPs, log scale) of each fitted law at the fixed sizes optimal at the
    report's budgets (dashed), each law's compute-optimal frontier L*(C) (solid, from the law's parameters,
    docs/scaling.md), the report's points, and each law's compute-equivalent gain over the reference at every
    budget: an arrow from the reference's compute C_ref = C / (1 - gain) to the law's C at the same loss.

    ``laws`` lists the law files (``fit --out``) in place of the ones the report names in ``laws[i].file``."""
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 100_000:
        raise ReportError(f"points = {points!r}: must be an integer from 2 to 100000 (curve points per law)")
    f, name = _inputs.read_frontier(report)
    fitted = frontier_laws(f, name, laws)
    check_agreement(f, name, fitted)
    computes = [b["compute"] for b in f.budgets]
    lo, hi = max(math.log10(min(computes)) - 1.0, -307.0), min(math.log10(max(computes)) + 1.0, 307.0)
    grid = sorted(set([10 ** (lo + (hi - lo) * i / (points - 1)) for i in range(points)] + computes))
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.subplots()
    for li, law in enumerate(fitted):
        color = _COLORS[li % len(_COLORS)]
        ax.plot(
            grid,
            law.frontier(grid)[1],
            color=color,
            linewidth=2,
            label=f"{law.name} ({law.form}): compute-optimal frontier",
            gid=f"frontier:{law.name}",
        )
        for bi, budget in enumerate(f.budgets):
            size = budget["laws"][li]["size"]
            iso = [c for c in grid if budget["compute"] / 10 <= c <= budget["compute"] * 10]
            ax.plot(
                iso,
                law.losses(size, iso),
                color=color,
                linewidth=0.8,
                linestyle="--",
                label=f"{law.name}: fixed size optimal at each budget" if bi == 0 else None,
                gid=f"size:{law.name}:{bi}",
            )
        ax.plot(
            computes,
            [b["laws"][li]["loss"] for b in f.budgets],
            "o",
            color=color,
            markersize=5,
            gid=f"points:{law.name}",
        )
    for li in range(1, len(fitted)):
        for budget in f.budgets:
            point = budget["laws"][li]
            if point["gain"] is None:
                continue
            c_ref = budget["compute"] / (1.0 - point["gain"])
            ax.annotate(
                gain_text(fitted[li].name, point),
                xy=(budget["compute"], point["loss"]),
                xytext=(c_ref, point["loss"]),
                fontsize=7,
                ha="left",
                va="bottom",
                arrowprops={"arrowstyle": "->", "color": _COLORS[li % len(_COLORS)]},
            )
    ax.set_xscale("log")
    ax.set_xlabel("training compute C (FLOPs)")
    ax.set_ylabel("loss")
    sparsity = f"; smelt laws at sparsity {f.sparsity:g}" if any(x.form == "smelt" for x in fitted) else ""
    ax.set_title(f"compute-optimal frontier, gain over {f.reference}{sparsity}", fontsize=10)
    ax.legend(fontsize=7)
    return fig


def gain_text(name: str, point: dict[str, Any]) -> str:
    text = f"{name} {100 * point['gain']:+.1f}%"
    if point["gain_interval"] is not None:
        lo, hi = point["gain_interval"]
        text += f" [{100 * lo:+.1f}%, {100 * hi:+.1f}%]"
    return text


def plot_sweep(report: Any) -> Figure:
    """The matched ablation grid of a sweep report: span fraction (rows) x loop count (columns) as two
    heatmaps, the largest mismatch (percent; cells outside the tolerance marked with a cross) and the executed
    depth (layer visits per token). The baseline and depth rows, off the grid, are listed underneath."""
    s = _inputs.read_sweep(report)
    loops_rows = [row for row in s.rows if row["kind"] == "loop"]
    spans = list(dict.fromkeys(row["span_fraction"] for row in loops_rows))
    loops = list(dict.fromkeys(row["loops"] for row in loops_rows))
    mismatch = [[math.nan] * len(loops) for _ in spans]
    executed = [[math.nan] * len(loops) for _ in spans]
    within = [[True] * len(loops) for _ in spans]
    span_names = {}
    for row in loops_rows:
        i, j = spans.index(row["span_fraction"]), loops.index(row["loops"])
        mismatch[i][j], executed[i][j], within[i][j] = (
            row["max_abs_mismatch_pct"],
            row["executed_layers"],
            row["within_tolerance"],
        )
        span_names[row["span_fraction"]] = row["span"]
    fig = Figure(figsize=(3.2 + 1.6 * len(loops), 2.4 + 0.45 * len(spans)), layout="constrained")
    left, right = fig.subplots(1, 2)
    panels = (
        (left, mismatch, "magma_r", f"max |mismatch| (%), tolerance {s.tolerance_pct:g}%", "{:.2f}%"),
        (right, executed, "Blues", "executed layers per token", "{:g}"),
    )
    for ax, values, cmap, title, fmt in panels:
        image = ax.imshow(values, cmap=cmap, aspect="auto")
        fig.colorbar(image, ax=ax, shrink=0.8)
        for i in range(len(spans)):
            for j in range(len(loops)):
                if not math.isnan(values[i][j]):
                    mark = "" if within[i][j] or values is executed else " ✗"
                    dark = image.norm(values[i][j]) > 0.5  # white text on the dark half of the colour map
                    ax.text(
                        j,
                        i,
                        fmt.format(values[i][j]) + mark,
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if dark else "black",
                    )
        ax.set_xticks(range(len(loops)), [f"×{n:g}" for n in loops])
        ax.set_yticks(range(len(spans)), [f"{100 * f:g}% ({span_names[f]})" for f in spans])
        ax.set_xlabel("loops")
        ax.set_title(title, fontsize=9)
    left.set_ylabel("looped span (fraction of layers)")
    others = [off_grid_text(row) for row in s.rows if row["kind"] != "loop"]
    if others:
        lines = ["; ".join(others[i : i + 3]) for i in range(0, len(others), 3)]
        fig.text(0.01, 0.0, "\n".join(lines), fontsize=7, va="bottom", gid="off-grid")
        fig.get_layout_engine().set(rect=(0, 0.06 * len(lines), 1, 1 - 0.06 * len(lines)))
    fig.suptitle(f"{s.baseline}: matched sweep ({len(loops_rows)} loop rows)", fontsize=10)
    return fig


def off_grid_text(row: dict[str, Any]) -> str:
    name = "baseline" if row["kind"] == "baseline" else f"depth {row['depth_multiplier']:g}x"
    verdict = "yes" if row["within_tolerance"] else "no"
    return f"{name}: {row['executed_layers']:g} layers, max {row['max_abs_mismatch_pct']:.3f}% ({verdict})"


def plot_layers(report: Any) -> Figure:
    """A count report's stored layers: FLOPs per token (per visit x visits) stacked by FLOP term above, and
    parameters stacked by parameter term below; the looped span is shaded and each looped layer's bar says
    how many visits it gets. Terms that are zero in every layer are left out."""
    c = _inputs.read_layers(report)
    xs = [layer["layer"] for layer in c.layers]
    fig = Figure(figsize=(max(6.0, 0.22 * len(xs) + 2.5), 6.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    stack(
        top,
        xs,
        [{t: layer["flops"][t] * layer["visits"] for t in _inputs.FLOP_TERMS} for layer in c.layers],
        _inputs.FLOP_TERMS,
    )
    stack(bottom, xs, [layer["params"] for layer in c.layers], _inputs.PARAM_TERMS)
    if c.loop is not None:
        first, last = (int(v) for v in c.loop["span"].split("-"))
        for ax in (top, bottom):
            ax.axvspan(
                first - 0.5,
                last + 0.5,
                color="tab:orange",
                alpha=0.12,
                label=f"looped span {c.loop['span']} (×{c.loop['count']:g})",
            )
    for layer in c.layers:
        if layer["visits"] > 1:
            total = sum(layer["flops"][t] for t in _inputs.FLOP_TERMS) * layer["visits"]
            top.text(layer["layer"], total, f"×{layer['visits']:g}", ha="center", va="bottom", fontsize=6)
    top.set_ylabel("FLOPs per token")
    bottom.set_ylabel("parameters")
    bottom.set_xlabel("layer (1-based)")
    top.set_title("forward FLOPs per token (per visit × visits), by term", fontsize=9, loc="left")
    bottom.set_title("stored parameters, by term", fontsize=9, loc="left")
    top.margins(y=0.12)
    for ax in (top, bottom):
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"{c.model}: per-layer FLOPs and parameters", fontsize=10)
    return fig


def stack(ax: Any, xs: list[float], rows: list[dict[str, float]], terms: Sequence[str]) -> None:
    below = [0.0] * len(xs)
    for ti, term in enumerate(terms):
        heights = [row[term] for row in rows]
        if not any(heights):
            continue
        ax.bar(xs, heights, 0.8, bottom=below, label=term, color=matplotlib.colormaps["tab20"].colors[ti])
        below = [b + h for b, h in zip(below, heights)]


KINDS: dict[str, Callable[..., Figure]] = {
    "mismatch": plot_mismatch,
    "frontier": plot_frontier,
    "sweep": plot_sweep,
    "layers": plot_layers,
}
_FORMATS = {".png": "png", ".svg": "svg"}


def output_format(path: str | os.PathLike[str]) -> str:
    """The format of an output file, from its suffix: png or svg; anything else is a ReportError."""
    name = os.fspath(path)
    fmt = _FORMATS.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        raise ReportError(f'out = "{name}": must end in .png or .svg (the format is taken from the suffix)')
    return fmt


def save(fig: Figure, path: str | os.PathLike[str], dpi: int = 100) -> None:
    """Writes the figure to path, .png or .svg by its suffix, atomically: into a temporary file in the same
    folder, renamed over path once complete, so a failed or interrupted save leaves no file (and an existing
    one unchanged). The output carries no date or version, so the same report gives the same bytes."""
    name = os.fspath(path)
    fmt = output_format(name)
    folder = os.path.dirname(os.path.abspath(name))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(name) + ".", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, f"cannot write plot '{name}': {e.strerror}") from e
    try:
        metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
        with os.fdopen(fd, "wb") as out, matplotlib.rc_context({"svg.hashsalt": "smelt"}):
            fig.savefig(out, format=fmt, dpi=dpi, metadata=metadata)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would make the picture private
        os.replace(tmp, name)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, f"cannot write plot '{name}': {e.strerror or e}") from e
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def plot(kind: str, report: Any, out: str | os.PathLike[str] | None = None, **options: Any) -> Figure:
    """The figure of one KIND (mismatch, frontier, sweep, layers) of a report; saved to out when given."""
    if kind not in KINDS:
        raise ReportError(f'plot kind = "{kind}": must be one of {", ".join(KINDS)}')
    if out is not None:
        output_format(out)
    fig = KINDS[kind](report, **options)
    if out is not None:
        save(fig, out)
    return fig
