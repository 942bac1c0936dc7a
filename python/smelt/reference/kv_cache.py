"""The KV cache of incremental decoding: one slot per executed attention visit (docs/reference-model.md)."""

from __future__ import annotations

from typing import Iterator

import torch


class KVCache:
    """What a decoder keeps between forward calls, slot v for the v-th attention visit of ``model.schedule``.

    A looped layer has one slot per visit: each pass computes its keys and values from a different residual
    stream. After t tokens a slot holds what smelt counts (counting.md, section 7): all t tokens on full
    layers, the last min(W, t) on sliding ones, the last min(C, t) on chunked ones; GQA keeps (K, V) of the
    n_kv heads after RoPE, (B, n_kv, tokens, d) each; MLA keeps (latent, rope key), (B, tokens, r_kv) and
    (B, 1, tokens, d_rope). ``length`` is the number of tokens seen, the absolute position of the next one.
    """

    def __init__(self) -> None:
        self.slots: list[tuple[torch.Tensor, ...]] = []
        self.length = 0
        # Slot -> the keys and values the last call attended with (cached tokens and its own, untrimmed): what a
        # later pass under kv_policy 'shared' reads within that call.
        self.recent: dict[int, tuple[torch.Tensor, ...]] = {}

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        return iter(self.slots)

    def get(self, visit: int) -> tuple[torch.Tensor, ...] | None:
        return self.slots[visit] if visit < len(self.slots) else None

    def put(self, visit: int, tensors: tuple[torch.Tensor, ...]) -> None:
        if visit == len(self.slots):
            self.slots.append(tensors)
        else:
            self.slots[visit] = tensors

    def elements(self) -> int:
        """Cached elements over every slot (times ``kv_cache_bytes``: smelt's ``kv.bytes_at_context``)."""
        return sum(x.numel() for slot in self.slots for x in slot)


@torch.no_grad()
def generate(model: torch.nn.Module, prompt: torch.Tensor, n: int) -> torch.Tensor:
    """Greedy decoding: the (B, P) prompt, then n tokens, each the argmax of the last logits, one at a time."""
    cache = KVCache()
    logits = model(prompt, cache=cache).logits
    out = [prompt]
    for i in range(n):
        out.append(logits[:, -1:].argmax(dim=-1))
        if i + 1 < n:
            logits = model(out[-1], cache=cache).logits
    return torch.cat(out, dim=1)
