"""The reference model: blocks, the loop schedule, initialisation and ``build_model``."""

from __future__ import annotations

from typing import Any, Mapping

import torch
import torch.nn.functional as F
from torch import nn

import smelt

from ._args import MAX_SEED, check_int
from ._attention import Attention
from ._cache import KVCache
from ._common import norm
from ._mla import MLA
from ._moe import FFN, MoE
from ._mtp import MTPModule, training_loss


def native(cfg: Any) -> dict:
    if isinstance(cfg, smelt.Config):
        return cfg.to_dict()
    return smelt.read_config(cfg).to_dict()


class Block(nn.Module):
    """Pre-norm layer: x + s*attn(norm(x)), then x + s*ffn(norm(x)); s is 1 outside the loop."""

    def __init__(self, cfg: Mapping[str, Any], kind: str, is_moe: bool, renormalize: bool) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        attention = MLA if cfg["attention"]["type"] == "mla" else Attention
        self.attn_norm, self.attn = norm(cfg, h), attention(cfg, kind)
        self.ffn_norm = norm(cfg, h)
        self.ffn = MoE(cfg, renormalize) if is_moe else FFN(cfg, cfg["ffn"]["dense_width"])

    def forward(
        self, x: torch.Tensor, scale: float = 1.0, cache: KVCache | None = None, visit: int = 0
    ) -> torch.Tensor:
        x = x + scale * self.attn(self.attn_norm(x), cache, visit)
        return x + scale * self.ffn(self.ffn_norm(x))


def _moe_layers(cfg: Mapping[str, Any]) -> set[int]:
    """0-based MoE layers (docs/config.md, section 1.4)."""
    moe = cfg.get("moe")
    if moe is None:
        return set()
    sel = moe["layers"]
    if isinstance(sel, list):
        return {i - 1 for i in sel}
    f, n, p = sel.get("first_dense", 0), sel.get("every", 1), sel.get("phase", 0)
    return {i for i in range(cfg["num_layers"]) if i >= f and i % n == p}


class ReferenceModel(nn.Module):
    """Embedding, the layers (the looped span executed ``count`` times), final norm, LM head."""

    def __init__(self, cfg: Mapping[str, Any], renormalize: bool = True) -> None:
        super().__init__()
        self.config = dict(cfg)
        v, h, n = cfg["vocab_size"], cfg["hidden_size"], cfg["num_layers"]
        pattern, moe = cfg["attention"]["pattern"], _moe_layers(cfg)
        self.embed = nn.Embedding(v, h)
        self.layers = nn.ModuleList(Block(cfg, pattern[i % len(pattern)], i in moe, renormalize) for i in range(n))
        self.final_norm = norm(cfg, h)
        self.lm_head = None if cfg["tie_embeddings"] else nn.Linear(h, v, bias=False)
        self.schedule = self._schedule(cfg)
        # Multi-token prediction (_mtp.py): each module's layer shaped like the last one, full attention.
        d = cfg.get("mtp_modules", 0)
        last = (cfg, "full", n - 1 in moe, renormalize)
        self.mtp = nn.ModuleList(MTPModule(cfg, Block(*last)) for _ in range(d)) if d else None

    @staticmethod
    def _schedule(cfg: Mapping[str, Any]) -> list[tuple[int, float]]:
        """(0-based layer, residual scale) per executed visit (docs/config.md, section 1.5)."""
        n, loop = cfg["num_layers"], cfg.get("loop")
        if not loop or loop.get("count", 1) <= 1:
            return [(i, 1.0) for i in range(n)]
        first, _, last = loop["span"].partition("-")
        lo, hi = int(first) - 1, int(last or first) - 1
        s = float(loop.get("residual_scale", 1.0 / loop["count"]))
        span = [(i, s) for i in range(lo, hi + 1)]
        return [(i, 1.0) for i in range(lo)] + span * loop["count"] + [(i, 1.0) for i in range(hi + 1, n)]

    def forward(self, tokens: torch.Tensor, cache: KVCache | list | None = None) -> torch.Tensor:
        """Logits for every position of the (B, t) tokens.

        With a ``KVCache`` the tokens follow the ``cache.length`` tokens it has seen (RoPE and the masks at
        their absolute positions) and the cache is updated: a prefill, then one decode step per call. An empty
        list receives the slots of a fresh cache after these tokens (the prefill-only form).
        """
        kv = KVCache() if isinstance(cache, list) else cache
        if kv is not None and len(kv) not in (0, len(self.schedule)):
            raise ValueError(f"KVCache has {len(kv)} slots: this model has {len(self.schedule)} attention visits")
        x = self.embed(tokens)
        for v, (i, scale) in enumerate(self.schedule):  # a looped layer is the same module on every visit
            x = self.layers[i](x, scale, kv, v)
        if kv is not None:
            kv.length += tokens.shape[1]
        if isinstance(cache, list):
            cache.extend(kv.slots)
        x = self.final_norm(x)
        if self.lm_head is None:
            return F.linear(x, self.embed.weight)
        return self.lm_head(x)

    def loss(self, tokens: torch.Tensor, mtp_weight: float = 0.3) -> torch.Tensor:
        """Next-token loss on tokens[:, :T] plus the MTP modules' (T = length - mtp_modules - 1; _mtp.py)."""
        return training_loss(self, tokens, mtp_weight)


def _init(model: nn.Module, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    norms = {id(p) for m in model.modules() if isinstance(m, (nn.RMSNorm, nn.LayerNorm)) for p in m.parameters()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if id(p) in norms:
                p.fill_(0.0 if leaf == "bias" else 1.0)
            elif leaf.endswith("bias") or leaf == "sinks":  # DeepSeek-V3's correction bias starts at 0 too
                p.zero_()
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def build_model(cfg: Any, seed: int = 0, device: Any = None, renormalize: bool = True) -> ReferenceModel:
    """The reference model of ``cfg`` (a path, dict or ``smelt.Config``, native or Hugging Face).

    ``renormalize``: top-k routing weights divided by their sum (Mixtral's
    softmax over the chosen logits; DeepSeek-V3's ``norm_topk_prob`` with sigmoid
    routing; Llama 4's sigmoid form is never renormalised); the native config
    has no field for it and no count depends on it.
    """
    check_int("build_model", "seed", seed, 0, MAX_SEED)
    c = native(cfg)
    dev = torch.device(device) if device is not None else torch.device("cpu")
    with dev:
        model = ReferenceModel(c, renormalize)
    if dev.type != "meta":
        _init(model, seed)
    return model
