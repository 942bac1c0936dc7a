"""Stored parameters per smelt parameter term (docs/counting.md, section 5)."""

from __future__ import annotations

from torch import nn

from .._report import TERMS as _REPORT_TERMS

# smelt's parameter terms (docs/counting.md, section 5), in its report's order (from the report's writer).
TERMS: tuple[str, ...] = _REPORT_TERMS["params"]


# A layer's norm modules (_model.Block): before each sublayer, and on its output or sum with a sandwich.
NORMS = ("attn_norm", "ffn_norm", "attn_post_norm", "ffn_post_norm")


def _term(name: str) -> str:
    if name.startswith("embed."):
        return "embedding"
    if name.startswith("lm_head."):
        return "lm_head"
    if name.startswith(("exit_gates.", "injections.")) or ".adapters." in name:  # per-visit LoRA too
        return "loop_extras"
    if name.startswith("final_norm.") or any(f".{n}." in name for n in NORMS):
        return "norms"
    if ".attn." in name:
        return "attention"
    if ".ffn.router." in name:
        return "router"
    if ".ffn.experts." in name:
        return "experts"
    if ".ffn.shared" in name:
        return "shared_experts"
    return "dense_ffn"


def param_terms(model: nn.Module) -> dict[str, int]:
    """Stored parameters per smelt term; a tied head and a looped layer appear once; the MTP modules not at all."""
    out = dict.fromkeys(TERMS, 0)
    for name, p in model.named_parameters():
        if not name.startswith("mtp."):
            out[_term(name)] += p.numel()
    return out


def mtp_params(model: nn.Module) -> int:
    """The MTP modules' own parameters, smelt's ``params.mtp`` (outside ``params.total``: counting.md, section 6)."""
    return sum(p.numel() for name, p in model.named_parameters() if name.startswith("mtp."))
