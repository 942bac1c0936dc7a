"""``SmeltCache``: a transformers ``Cache`` with one slot per attention visit (smelt.torch's ``KVCache``)."""

from __future__ import annotations

import torch
from transformers import Cache

from .kv_cache import KVCache


class SmeltCache(KVCache, Cache):
    """What ``generate`` carries between steps: slot v holds the v-th attention visit's keys and values (a looped
    layer one per pass; sliding and chunked windows capped; MLA's latent and rope key), exactly what smelt counts
    (docs/counting.md, section 7). It belongs to one batch: reused with another batch size it raises."""

    def __init__(self) -> None:
        KVCache.__init__(self)
        Cache.__init__(self, layers=[])
        self.rows: int | None = None

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.length

    @property
    def batch_size(self) -> int:
        return self.rows if self.rows is not None else -1

    def get_max_length(self, layer_idx: int | None = None) -> int:
        return -1  # grows with the tokens (a window caps its own slots)

    def check_batch(self, batch: int) -> None:
        if self.rows is None or self.length == 0:
            self.rows = batch
        elif batch != self.rows:
            raise ValueError(
                f"past_key_values: this SmeltCache holds {self.rows} sequences, the input has {batch}: "
                "a cache belongs to one batch (start a new SmeltCache)"
            )

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        """Beam search: keep the rows ``beam_idx`` names, in that order, in every slot."""
        self.slots = [tuple(x.index_select(0, beam_idx.to(x.device)) for x in slot) for slot in self.slots]

    def reset(self) -> None:
        KVCache.__init__(self)
        self.rows = None

    def __repr__(self) -> str:
        return f"SmeltCache({len(self.slots)} slots, {self.length} tokens)"
