"""Dense FFNs and the MoE layer: router, routed experts on their own tokens, shared experts."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .lora import project
from .model_config import ModelConfig


class FFN(nn.Module):
    """One FFN of width f: gated (SwiGLU, 3 matrices) or plain (2, GELU); biases 2f + h or f + h."""

    def __init__(self, cfg: ModelConfig, width: int, clamp: tuple[float, float] | None = None) -> None:
        super().__init__()
        h, fc = cfg.hidden_size, cfg.ffn
        self.gated = fc.type == "gated"
        bias = fc.bias
        if self.gated:
            self.gate_proj = nn.Linear(h, width, bias=bias)
        self.up_proj = nn.Linear(h, width, bias=bias)
        self.down_proj = nn.Linear(width, h, bias=bias)
        # gpt-oss's clamped SwiGLU (alpha, limit): the routed experts of a config with moe.clamped_swiglu.
        self.clamp = clamp

    def forward(self, x: torch.Tensor, lora_pass: int = 0) -> torch.Tensor:
        """``lora_pass``: the pass a per-visit LoRA of a dense FFN adapts for."""
        def gate(y: torch.Tensor) -> torch.Tensor:
            return project(self.gate_proj, y, lora_pass)

        def up(y: torch.Tensor) -> torch.Tensor:
            return project(self.up_proj, y, lora_pass)

        def down(y: torch.Tensor) -> torch.Tensor:
            return project(self.down_proj, y, lora_pass)

        if self.clamp is not None:  # GptOssExperts._apply_gate: elementwise, the same products
            alpha, limit = self.clamp
            g, u = gate(x).clamp(max=limit), up(x).clamp(-limit, limit)
            return down((u + 1) * g * torch.sigmoid(alpha * g))
        if self.gated:
            return down(F.silu(gate(x)) * up(x))
        return down(F.gelu(up(x)))


class Router(nn.Linear):
    """The router, one Linear(H, E): H*E weights, + E for ``moe.router_bias`` (either kind below), routing in the
    config's ``moe.router_form`` (docs/config.md, section 1.4).

    ``"plain"`` + router_bias: gpt-oss's bias on the logits (``self.bias``), so it moves the choice and the weights.
    ``"deepseek"`` + router_bias: DeepSeek-V3's ``e_score_correction_bias``, added to the scores for the top-k
    choice only; the weights are the uncorrected scores. It is balanced by a rule, not by gradient (technical
    report, section 2.1.2), so it is a parameter with requires_grad=False: stored, counted, never trained here.
    """

    def __init__(self, h: int, e: int, score: str, bias: bool, form: str) -> None:
        super().__init__(h, e, bias=bias and form == "plain")
        self.score, self.form = score, form
        self.e_score_correction_bias = None
        if bias and form == "deepseek":
            self.e_score_correction_bias = nn.Parameter(torch.empty(e), requires_grad=False)

    def route(
        self, x: torch.Tensor, top_k: int, renormalize: bool, routed: list | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, bool]:
        """(weights, chosen experts, whether the weights scale the expert's input) for tokens x (N, H); the logits
        are appended to ``routed`` when given (smelt.hf's load-balancing loss reads every visit's)."""
        logits = self(x)  # the one H x E product: all the router's FLOPs
        if routed is not None:
            routed.append(logits)
        if self.score == "softmax" and self.e_score_correction_bias is None:
            weight, chosen = torch.topk(torch.softmax(logits, dim=-1), top_k, dim=-1)
        elif self.score == "softmax":  # choose on probability + correction bias, weigh by the probability
            probs = torch.softmax(logits, dim=-1)
            _, chosen = torch.topk(probs + self.e_score_correction_bias, top_k, dim=-1)
            weight = probs.gather(-1, chosen)
        elif self.form == "llama4":
            # Llama4Router: top-k on the logits (sigmoid is monotone, so the same choice as on the scores),
            # sigmoid of the chosen, never renormalised, and Llama4TextMoe scales the expert's input by it.
            top, chosen = torch.topk(logits, top_k, dim=-1)
            return torch.sigmoid(top), chosen, True
        else:
            # DeepseekV3TopkRouter with n_group = topk_group = 1: choose on score + correction bias (none: on the
            # score), weigh by the score; norm_topk_prob is ``renormalize``, routed_scaling_factor 1.
            scores = torch.sigmoid(logits)
            b = self.e_score_correction_bias
            _, chosen = torch.topk(scores if b is None else scores + b, top_k, dim=-1)
            weight = scores.gather(-1, chosen)
        if renormalize:
            weight = weight / weight.sum(dim=-1, keepdim=True)
        return weight, chosen, False


class MoE(nn.Module):
    """Router H -> E (softmax or sigmoid, top-k), E routed experts run on their own tokens, S shared experts."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        m, h = cfg.moe, cfg.hidden_size
        self.top_k, self.renormalize = m.top_k, m.renormalize
        self.router = Router(h, m.num_experts, m.router_score, m.router_bias, m.router_form)
        self.experts = nn.ModuleList(FFN(cfg, m.expert_width, m.clamped_swiglu) for _ in range(m.num_experts))
        self.shared = nn.ModuleList(FFN(cfg, m.shared_width) for _ in range(m.num_shared_experts))
        # Qwen2-MoE: sigmoid(Linear(H, 1)) scales the shared experts' output.
        self.shared_gate = nn.Linear(h, 1, bias=False) if m.shared_gate else None

    def forward(self, x: torch.Tensor, routed: list | None = None) -> torch.Tensor:
        """The layer's output; the router's logits appended to ``routed`` when given."""
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        weight, chosen, on_input = self.router.route(x, self.top_k, self.renormalize, routed)
        out = self._dispatch(x, weight, chosen, on_input)
        if len(self.shared):
            s = sum(f(x) for f in self.shared)
            if self.shared_gate is not None:
                s = torch.sigmoid(self.shared_gate(x)) * s
            out = out + s
        return out.reshape(shape)

    def _dispatch(self, x: torch.Tensor, weight: torch.Tensor, chosen: torch.Tensor, on_input: bool) -> torch.Tensor:
        """Each expert that was hit runs once on its own routed tokens; their weighted outputs summed per token
        (``on_input``: Llama 4 weighs the expert's input instead).

        The (token, slot) pairs are sorted by expert once (stable, so each expert sees its tokens in order), and
        every expert reads its contiguous slice: the same products as selecting each expert's tokens on its own,
        without a mask, a nonzero and an index_add per expert.
        """
        flat = chosen.reshape(-1)
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=len(self.experts)).tolist()
        tok = order // chosen.shape[-1]  # the token of each sorted (token, slot) pair
        w = weight.reshape(-1)[order, None].to(x.dtype)
        xs = x[tok] * w if on_input else x[tok]
        ys = [self.experts[e](part) for e, part in enumerate(xs.split(counts)) if counts[e]]
        if not ys:
            return torch.zeros_like(x)
        y = torch.cat(ys) if on_input else torch.cat(ys) * w
        return torch.zeros_like(x).index_add(0, tok, y)
