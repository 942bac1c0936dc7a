"""Hugging Face transformers weights into the reference model (docs/reference-model.md, "Against Hugging Face").

``load_hf_state_dict(model, state_dict, hf_config)`` copies a transformers ``*ForCausalLM`` state dict into a
``build_model`` of the same config, by the name mapping below. Every transformers tensor must map onto exactly one
reference tensor of the same shape and every reference tensor must be filled: anything else raises ``ValueError``
naming the tensor. Nothing is downloaded; this is how the reference model is checked against transformers' own
model classes (tests/python/test_torch_hf.py).

The mapping, per layer i (``model.`` stripped from transformers' names):

- ``embed_tokens`` -> ``embed``, ``norm`` -> ``final_norm``, ``lm_head`` -> ``lm_head`` (absent when tied);
- ``layers.i.input_layernorm`` -> ``attn_norm``, ``post_attention_layernorm`` -> ``ffn_norm``;
- ``layers.i.self_attn.*`` -> ``layers.i.attn.*`` (same leaf names: q/k/v/o_proj, q_norm, k_norm, sinks, MLA's
  q_a_proj, q_a_layernorm, q_b_proj, q_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj);
- a dense ``mlp.{gate,up,down}_proj`` -> ``ffn.*``; ``mlp.gate`` or ``mlp.router`` (``feed_forward.router``)
  -> ``ffn.router`` (DeepSeek-V3's ``e_score_correction_bias`` included); ``shared_expert(s)`` ->
  ``ffn.shared.0`` (DeepSeek's S shared experts are one FFN of width S*F there: split by rows), ``shared_expert_gate``
  -> ``ffn.shared_gate``;
- the fused experts: ``experts.gate_up_proj`` (E, 2F, H) for ``F.linear``, gate rows first (Mixtral, Qwen, OLMoE,
  DeepSeek), (E, H, 2F) for ``x @ W`` with gate and up interleaved (gpt-oss) or gate first (Llama 4);
  ``experts.down_proj`` (E, H, F) or (E, F, H): each becomes ``ffn.experts.e.{gate,up,down}_proj.weight`` (and
  gpt-oss's biases).

RoPE: DeepSeek (V2's complex form, V3's ``rope_interleave``) and Llama 4 rotate interleaved pairs (2j, 2j + 1) at
frequency j; the reference model rotates the pairs (j, j + d/2). The two are one fixed permutation P of the rotated
dimensions apart, the same for queries and keys, and q . k is unchanged by it, so the rows of the projections that
produce the rotated parts are permuted by P on the way in (as transformers' own Llama checkpoint converter does).
"""

from __future__ import annotations

import re
from typing import Mapping

import torch
from torch import nn

_INTERLEAVED = {"deepseek_v2", "deepseek_v3", "llama4_text", "llama4"}


def _perm(d: int) -> torch.Tensor:
    """Interleaved pair (2j, 2j + 1) -> rotate-half pair (j, j + d/2): new[j] = old[2j], new[j + d/2] = old[2j + 1]."""
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])


def _permute_rows(w: torch.Tensor, heads: int, head: int, start: int, d: int) -> torch.Tensor:
    """Permute rows [start, start + d) of each head's block of ``head`` rows."""
    w = w.reshape(heads, head, *w.shape[1:]).clone()
    w[:, start : start + d] = w[:, start + _perm(d)]
    return w.reshape(heads * head, *w.shape[2:])


def _experts(model_type: str, name: str, t: torch.Tensor, out: dict) -> None:
    """Split a fused expert tensor ``layers.i.ffn.experts.<leaf>`` into the per-expert reference tensors."""
    prefix, leaf = name.rsplit(".", 1)
    for e in range(t.shape[0]):
        w = t[e]
        p = f"{prefix}.{e}"
        if leaf == "gate_up_proj":
            if model_type in ("gpt_oss", "llama4_text", "llama4"):
                w = w.T  # stored (H, 2F) for x @ W
            if model_type == "gpt_oss":  # gate and up interleaved along 2F
                gate, up = w[0::2], w[1::2]
            else:
                gate, up = w.chunk(2, dim=0)
            out[f"{p}.gate_proj.weight"], out[f"{p}.up_proj.weight"] = gate, up
        elif leaf == "gate_up_proj_bias":
            out[f"{p}.gate_proj.bias"], out[f"{p}.up_proj.bias"] = w[0::2], w[1::2]
        elif leaf == "down_proj":
            out[f"{p}.down_proj.weight"] = w.T if model_type in ("gpt_oss", "llama4_text", "llama4") else w
        elif leaf == "down_proj_bias":
            out[f"{p}.down_proj.bias"] = w
        else:
            raise ValueError(f"transformers tensor '{name}': no reference tensor for it")


_RENAMES = [
    (r"^(model\.)?embed_tokens\.", "embed."),
    (r"^(model\.)?norm\.", "final_norm."),
    (r"^(model\.)?layers\.(\d+)\.input_layernorm\.", r"layers.\2.attn_norm."),
    (r"^(model\.)?layers\.(\d+)\.post_attention_layernorm\.", r"layers.\2.ffn_norm."),
    (r"^(model\.)?layers\.(\d+)\.self_attn\.", r"layers.\2.attn."),
    (r"^(model\.)?layers\.(\d+)\.(mlp|feed_forward)\.(gate|router)\.", r"layers.\2.ffn.router."),
    (r"^(model\.)?layers\.(\d+)\.(mlp|feed_forward)\.shared_experts?\.", r"layers.\2.ffn.shared.0."),
    (r"^(model\.)?layers\.(\d+)\.(mlp|feed_forward)\.shared_expert_gate\.", r"layers.\2.ffn.shared_gate."),
    (r"^(model\.)?layers\.(\d+)\.(mlp|feed_forward)\.experts\.", r"layers.\2.ffn.experts."),
    (r"^(model\.)?layers\.(\d+)\.(mlp|feed_forward)\.", r"layers.\2.ffn."),
    (r"^lm_head\.", "lm_head."),
]


def _rename(name: str) -> str:
    for pattern, repl in _RENAMES:
        new, n = re.subn(pattern, repl, name)
        if n:
            return new
    raise ValueError(f"transformers tensor '{name}': no reference tensor for it")


def _rope_rows(model: nn.Module, name: str, t: torch.Tensor) -> torch.Tensor:
    """Interleaved RoPE -> rotate-half: permute the rows that make the rotated dimensions (module docstring)."""
    a = model.config.attention
    leaf = name.rsplit(".", 2)[-2]
    if a.type == "mla":
        n, d_nope, d_rope, r_kv = a.num_heads, a.qk_nope_head_dim, a.qk_rope_head_dim, a.kv_lora_rank
        if leaf in ("q_b_proj", "q_proj"):
            return _permute_rows(t, n, d_nope + d_rope, d_nope, d_rope)
        if leaf == "kv_a_proj_with_mqa":
            return _permute_rows(t, 1, r_kv + d_rope, r_kv, d_rope)
        return t
    d = a.head_dim
    if leaf in ("q_proj", "k_proj"):
        return _permute_rows(t, t.shape[0] // d, d, 0, d)
    return t


def load_hf_state_dict(model: nn.Module, state_dict: Mapping[str, torch.Tensor], hf_config: Mapping) -> None:
    """Copy a transformers state dict into ``model``, ``build_model`` of the same ``hf_config`` (its dict: the
    family is its ``model_type``, or ``text_config``'s for the ``llama4`` wrapper).

    Raises ``ValueError`` for a transformers tensor that maps onto nothing, a reference tensor left unfilled, or a
    shape mismatch, each named. Non-persistent buffers (RoPE's ``inv_freq``) are not in a state dict.
    """
    model_type = hf_config["model_type"]
    if model_type == "llama4":
        model_type = hf_config["text_config"]["model_type"]
    interleaved = model_type in _INTERLEAVED and hf_config.get("rope_interleave", True)
    mine = dict(model.named_parameters())
    filled: dict[str, torch.Tensor] = {}
    for name, t in state_dict.items():
        new = _rename(name)
        if new == "lm_head.weight" and new not in mine:  # a tied head: the embedding's own tensor
            if not torch.equal(t, state_dict[next(k for k in state_dict if k.endswith("embed_tokens.weight"))]):
                raise ValueError("transformers tensor 'lm_head.weight': the reference head is tied, this one is not")
            continue
        if ".ffn.experts." in new:
            _experts(model_type, new, t, filled)
            continue
        if ".ffn.shared.0." in new and f"{new.rsplit('.', 3)[0]}.1.down_proj.weight" in mine:
            _split_shared(new, t, mine, filled)
            continue
        if interleaved and ".attn." in new:
            t = _rope_rows(model, new, t)
        filled[new] = t
    missing = sorted(set(mine) - set(filled))
    extra = sorted(set(filled) - set(mine))
    if extra:
        raise ValueError(f"transformers tensors with no reference tensor: {', '.join(extra)}")
    if missing:
        raise ValueError(f"reference tensors that no transformers tensor fills: {', '.join(missing)}")
    with torch.no_grad():
        for name, t in filled.items():
            if tuple(t.shape) != tuple(mine[name].shape):
                raise ValueError(
                    f"'{name}': transformers shape {tuple(t.shape)}, reference shape {tuple(mine[name].shape)}"
                )
            mine[name].copy_(t)


def _split_shared(name: str, t: torch.Tensor, mine: dict, out: dict) -> None:
    """DeepSeek's n_shared_experts experts are one transformers MLP of width S*F: rows (gate, up) or columns
    (down) split into the reference model's S shared FFNs of F each (the same sum: a wider FFN is its halves)."""
    base, proj, leaf = name.rsplit(".", 2)
    base = base.rsplit(".", 1)[0]  # layers.i.ffn.shared
    s = sum(1 for k in mine if k.startswith(f"{base}.") and k.endswith(".down_proj.weight"))
    for k, part in enumerate(t.chunk(s, dim=1 if proj == "down_proj" else 0)):
        out[f"{base}.{k}.{proj}.{leaf}"] = part

