"""A reference PyTorch model for smelt configs (docs/reference-model.md).

``build_model(cfg)`` builds a ``torch.nn.Module`` whose stored parameters and
executed matrix products are the ones smelt counts (docs/counting.md), so the
counts can be checked on a real forward pass. It is a reference, not a fast
model: attention multiplies the full T x T scores and masks afterwards, and
routed experts run in a Python loop over the experts that were hit, each on
its own tokens only. ``KVCache`` holds one slot per attention visit for
incremental decoding (``generate`` decodes greedily from it).

Weights are random (no checkpoint is loaded): with a generator seeded by
``seed``, every matrix is drawn from N(0, 0.02^2) in ``named_parameters()``
order, biases and sink logits start at 0 and norm weights at 1. On the
``meta`` device nothing is allocated or initialised (for counting only).

Every feature a valid smelt config can switch on is built (smelt's validator
refuses the rest first); nothing is approximated.
"""

from __future__ import annotations

from ..reference.attention import Attention, attention_mask
from ..reference.kv_cache import KVCache, generate
from ..reference.mla import MLA
from ..reference.moe import FFN, MoE
from ..reference.model_config import ModelConfig
from ..reference.mtp import MTPModule, mtp_logits, trunk
from ..reference.reference_model import ReferenceOutput
from ._measure import Measurement, Row, measure
from ._model import ReferenceModel, build_model
from ._shrink import shrink
from ._terms import TERMS, mtp_params, param_terms

__all__ = [
    "build_model",
    "param_terms",
    "shrink",
    "attention_mask",
    "generate",
    "KVCache",
    "ReferenceModel",
    "Attention",
    "MLA",
    "FFN",
    "MoE",
    "TERMS",
    "ModelConfig",
    "ReferenceOutput",
]
__all__ += ["MTPModule", "mtp_logits", "mtp_params", "trunk"]
__all__ += ["measure", "Measurement", "Row"]
