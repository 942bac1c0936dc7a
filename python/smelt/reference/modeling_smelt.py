"""``SmeltForCausalLM``: smelt.torch's reference model behind transformers' ``PreTrainedModel`` (docs/training.md)."""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import MoeCausalLMOutputWithPast

from .attention import Attention
from .checkpoint import FLOATS
from .checkpoint import tensors as checkpoint_tensors
from .configuration_smelt import SmeltConfig
from .loss import causal_loss, load_balancing_loss
from .mla import MLA
from .model_config import ModelConfig
from .reference_model import ReferenceModel, _init
from .smelt_cache import SmeltCache

# Arguments generate() and Trainer may pass that change nothing when false or None.
_HARMLESS = ("output_attentions", "output_hidden_states", "cache_position", "return_dict")


class SmeltPreTrainedModel(PreTrainedModel):
    config_class = SmeltConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = True
    _supports_sdpa = True
    _no_split_modules = ["Block"]
    accepts_loss_kwargs = False  # the loss is a mean over this batch's tokens (Trainer passes no token count)

    @torch.no_grad()
    def initialize_weights(self) -> None:
        """smelt.torch's seeded initialisation of the whole model at once (one generator, in parameter order);
        transformers' ``init.copy_`` leaves a tensor that from_pretrained loaded alone."""
        if hasattr(self, "model"):
            _init(self.model, self.config.init_seed, assign=init.copy_)


class SmeltForCausalLM(SmeltPreTrainedModel, GenerationMixin):
    """A causal LM of any config smelt counts: ``self.model`` is ``smelt.torch.ReferenceModel``, so its stored
    parameters, executed products and KV cache are smelt's counts (docs/reference-model.md)."""

    def __init__(self, config: SmeltConfig) -> None:
        super().__init__(config)
        if config.smelt is None:
            raise ValueError(
                "config.smelt: missing: a SmeltConfig holds the native smelt config (config.json's \"smelt\" "
                "object, as smelt.hf.save or `smelt-match export --to hf --family smelt` writes it)"
            )
        self.model = self._reference(config)
        self.gradient_checkpointing = False
        self.post_init()

    @staticmethod
    def _reference(config: SmeltConfig) -> ReferenceModel:
        """The model's modules (under ``torch.device("meta")``: its shapes alone, nothing allocated)."""
        return ReferenceModel(config.smelt)

    @classmethod
    def _supports_default_dynamic_cache(cls) -> bool:
        return False  # forward makes a SmeltCache: one slot per attention visit, not one per layer

    def get_input_embeddings(self) -> nn.Module:
        return self.model.embed

    def set_input_embeddings(self, value: nn.Module) -> None:
        self.model.embed = value

    def get_output_embeddings(self) -> nn.Module | None:
        return self.model.lm_head

    def _set_gradient_checkpointing(
        self, enable: bool = True, gradient_checkpointing_func: Any = None, every_n_layers: int = 1
    ) -> None:
        """Recompute every layer visit in the backward (smelt.torch's ``recompute="full"``: a looped layer's
        passes each on their own, with the reentrant ``torch.utils.checkpoint``)."""
        if every_n_layers != 1:
            raise ValueError(f"every_n_layers = {every_n_layers}: SmeltForCausalLM recomputes every visit (1)")
        m = self.model
        if enable and m.reads_only:
            raise ValueError("gradient checkpointing: not built with kv_policy 'shared' (smelt.torch.ReferenceModel)")
        m.recompute, m.recompute_layers = ("full" if enable else "none"), 0
        self.gradient_checkpointing = enable

    def _attention_form(self) -> None:
        sdpa = self.config._attn_implementation == "sdpa"
        for module in self.model.modules():
            if isinstance(module, (Attention, MLA)):
                module.sdpa = sdpa

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: SmeltCache | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_router_logits: bool | None = None,
        **kwargs: Any,
    ) -> MoeCausalLMOutputWithPast:
        """Logits of the (B, T) ``input_ids``; with ``past_key_values`` they follow its tokens. ``labels`` (B, T),
        -100 where ignored: the mean next-token loss (labels shifted by one here, as transformers' models do), plus
        ``mtp_loss_weight`` / D x the MTP depths' losses, minus Ouro's exit-entropy term (smelt.torch), plus
        ``router_aux_loss_coef`` x the load-balancing loss."""
        for key, value in kwargs.items():
            if key not in _HARMLESS or (value is not None and value is not False and key != "return_dict"):
                raise TypeError(f"SmeltForCausalLM.forward(): {key} = {_show(value)}: not supported")
        if input_ids is None:
            raise ValueError("input_ids: missing (inputs_embeds are not supported)")
        if attention_mask is not None and not bool(attention_mask.bool().all()):
            raise ValueError(
                "attention_mask: has zeros: padded rows are not supported (every row attends all its tokens); "
                "batch rows of one length"
            )
        if use_cache is None:
            use_cache = bool(self.config.use_cache) and not self.training
        cache = past_key_values
        if cache is not None and not isinstance(cache, SmeltCache):
            raise TypeError(
                f"past_key_values = {type(cache).__name__}: must be a SmeltCache (one slot per attention visit)"
            )
        if cache is None and use_cache:
            cache = SmeltCache()
        if cache is not None:
            cache.check_batch(input_ids.shape[0])
        self._attention_form()
        coef = float(self.config.router_aux_loss_coef or 0.0)
        moe = self.model.config.moe
        record = moe is not None and (bool(output_router_logits) or (labels is not None and coef > 0))
        out = self.model(input_ids, cache=cache, output_router_logits=record)
        router_logits = out.router_logits if record else None
        aux = None
        if router_logits:
            aux = load_balancing_loss(router_logits, moe.num_experts, moe.top_k)
        loss = None
        if labels is not None:
            loss = causal_loss(self.model, out, labels, input_ids, float(self.config.mtp_loss_weight))
            if aux is not None and coef > 0:
                loss = loss + coef * aux.to(loss.dtype)
        return MoeCausalLMOutputWithPast(
            loss=loss, aux_loss=aux, logits=out.logits, past_key_values=cache if use_cache else None,
            router_logits=router_logits if output_router_logits else None,
        )

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> Any:
        """transformers' ``from_pretrained``, but a tensor the checkpoint lacks, has extra, holds in another shape
        than the config builds or holds as integers or booleans is a ValueError naming it, never a model partly
        re-initialised at random or a weight cast silently (``ignore_mismatched_sizes=True`` lets shape mismatches
        through, as in transformers). A local folder's safetensors headers are compared with the config before
        the model is built, so a config.json edited to sizes its weights do not have is refused, not allocated."""
        want_info = kwargs.pop("output_loading_info", False)
        allow = kwargs.pop("ignore_mismatched_sizes", False)
        _check_before_building(args[0] if args else kwargs.get("pretrained_model_name_or_path"), kwargs, allow)
        model, info = super().from_pretrained(*args, output_loading_info=True, ignore_mismatched_sizes=True, **kwargs)
        problems = [f"{k}: not in the checkpoint" for k in sorted(info.get("missing_keys") or [])]
        problems += [f"{k}: in the checkpoint, not in this config's model" for k in
                     sorted(info.get("unexpected_keys") or [])]
        if not allow:
            problems += [f"{k}: checkpoint shape {tuple(a)}, this config's {tuple(b)}" for k, a, b in
                         sorted(info.get("mismatched_keys") or [])]
        _refuse(problems)
        return (model, info) if want_info else model


def _refuse(problems: list[str]) -> None:
    if problems:
        shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
        raise ValueError(f"weights do not fit the config ({len(problems)} tensors): {shown}")


def _least_tensors(config: ModelConfig) -> int:
    """A lower bound on the tensors the config builds, from a handful of its fields: the embedding, two norms
    per layer, an up and a down projection per expert of every MoE layer."""
    moe = config.moe
    per_moe = 2 * (moe.num_experts + moe.num_shared_experts) * len(moe.layers) if moe else 0
    return 1 + 2 * config.num_layers + per_moe


def _check_before_building(source: Any, kwargs: dict, allow: bool) -> None:
    """from_pretrained of a local folder: its tensors (names, dtypes and shapes, from the safetensors headers)
    against the config's model built on the meta device, before anything is allocated. A hub name, or a folder
    without safetensors, is left to transformers and checked after loading."""
    try:
        folder = os.path.join(os.fspath(source), kwargs.get("subfolder") or "")
    except TypeError:
        return
    found = checkpoint_tensors(folder) if os.path.isdir(folder) else None
    if found is None:
        return
    _refuse([f"{k}: dtype {d} in the checkpoint: must be a floating-point type" for k, (d, _) in
             sorted(found.items()) if d not in FLOATS])
    config = kwargs.get("config")
    if not isinstance(config, SmeltConfig):
        config = SmeltConfig.from_pretrained(folder)
    if config.smelt is None:
        return  # __init__ says what is missing
    least = _least_tensors(ModelConfig.from_native(config.smelt))
    if least > len(found):
        raise ValueError(
            f"weights do not fit the config: it builds at least {least} tensors, the checkpoint holds {len(found)}"
        )
    with torch.device("meta"):
        model = SmeltForCausalLM._reference(config)
    state = model.state_dict(keep_vars=True)
    want = {f"model.{k}": tuple(v.shape) for k, v in state.items()}
    names: dict[int, set[str]] = {}  # a tensor held under several names is saved under one
    for k, v in state.items():
        names.setdefault(id(v), set()).add(f"model.{k}")
    problems = [f"{k}: not in the checkpoint" for k in sorted(want) if not names[id(state[k[6:]])] & found.keys()]
    problems += [f"{k}: in the checkpoint, not in this config's model" for k in sorted(found) if k not in want]
    if not allow:
        problems += [f"{k}: checkpoint shape {found[k][1]}, this config's {want[k]}" for k in sorted(found) if
                     k in want and found[k][1] != want[k]]
    _refuse(problems)


def _show(value: Any) -> str:
    return f"Tensor{tuple(value.shape)}" if isinstance(value, torch.Tensor) else repr(value)[:60]
