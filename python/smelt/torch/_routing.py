"""The routing choices of a native config's ``moe`` block (docs/config.md, section 1.4), defaults resolved.

Pure Python: smelt.hf's reader of the native config (without smelt, in a checkpoint's own code) resolves them too.
"""

from __future__ import annotations

from typing import Any, Mapping


def default_router_form(moe: Mapping[str, Any]) -> str:
    """The form a config has when it does not name one (smelt's ``default_router_form()``): softmax scores route
    plainly; sigmoid ones as DeepSeek-V3 with ``router_bias`` (its correction bias), as Llama 4 without."""
    if moe["router_score"] == "softmax":
        return "plain"
    return "deepseek" if moe["router_bias"] else "llama4"


def routing(moe: Mapping[str, Any]) -> tuple[str, bool, tuple[float, float] | None]:
    """(router_form, renormalize, clamped SwiGLU's (alpha, limit) or None) of a canonical ``moe`` block, which
    writes each only where it differs from its default."""
    form = moe.get("router_form", default_router_form(moe))
    renormalize = moe.get("renormalize", form != "llama4")
    clamp = moe.get("clamped_swiglu")
    return form, renormalize, (float(clamp["alpha"]), float(clamp["limit"])) if clamp else None
