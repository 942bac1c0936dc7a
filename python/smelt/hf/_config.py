"""``SmeltConfig``: a transformers configuration holding a native smelt config, loops and all (docs/training.md)."""

from __future__ import annotations

from typing import Any

from transformers import PreTrainedConfig

try:  # smelt's reader checks the native config; a checkpoint's own copy of this code runs without smelt
    import smelt
except ImportError:
    smelt = None  # type: ignore[assignment]

# Top-level copies of native fields under transformers' names (src/config/hf_smelt.cpp writes the same ones):
# transformers' name -> the native config's path.
MIRRORS = {
    "vocab_size": ("vocab_size",),
    "hidden_size": ("hidden_size",),
    "num_hidden_layers": ("num_layers",),
    "num_attention_heads": ("attention", "num_heads"),
    "tie_word_embeddings": ("tie_embeddings",),
}
# How the routers route, which the native config has no field for (smelt.torch.build_model): the defaults are a
# native config's; smelt.hf.SmeltForCausalLM.from_family sets the family's.
ROUTING = {"renormalize": True, "sigmoid_form": "llama4", "deepseek": False, "clamped_swiglu": None}


class SmeltConfig(PreTrainedConfig):
    """``smelt``: the native config as a dict (``smelt.Config.to_dict()``), checked by smelt's reader when set;
    ``routing``: the router choices above; ``init_seed``: the seeded initialisation of smelt.torch (the model's
    weights equal ``smelt.torch.build_model(smelt, seed=init_seed)``'s); ``router_aux_loss_coef``: weight of the
    MoE load-balancing loss added to the loss (0: off); ``mtp_loss_weight``: lambda of the MTP losses.

    The copies ``vocab_size``, ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads`` and
    ``tie_word_embeddings`` follow ``smelt``; one given with another value is refused, naming it.
    """

    model_type = "smelt"
    keys_to_ignore_at_inference = ["past_key_values"]

    def __init__(
        self,
        smelt: dict | None = None,
        routing: dict | None = None,
        init_seed: int = 0,
        router_aux_loss_coef: float = 0.0,
        mtp_loss_weight: float = 0.3,
        use_cache: bool = True,
        **kwargs: Any,
    ) -> None:
        copies = {k: kwargs.pop(k) for k in list(kwargs) if k in MIRRORS}
        if smelt is not None:
            smelt = _checked(smelt, copies)
            for key, path in MIRRORS.items():
                value: Any = smelt
                for part in path:
                    value = value[part]
                setattr(self, key, value)
        self.smelt = smelt
        self.routing = _routing(routing)
        self.init_seed = init_seed
        self.router_aux_loss_coef = router_aux_loss_coef
        self.mtp_loss_weight = mtp_loss_weight
        self.use_cache = use_cache
        super().__init__(**kwargs)


def _checked(native: Any, copies: dict) -> dict:
    """The native config as smelt reads it (a ConfigError names each bad field as ``smelt.<field>``, a copy that
    differs by its transformers name), in smelt's canonical form."""
    if smelt is None:  # without smelt (a checkpoint's own code): the dict as written, the copies compared
        if not isinstance(native, dict):
            raise ValueError(f"smelt = {type(native).__name__}: must be a native smelt config (a dict)")
        for key, value in copies.items():
            mine: Any = native
            for part in MIRRORS[key]:
                mine = mine[part]
            if value != mine:
                raise ValueError(f"{key} = {value!r}: must equal smelt.{'.'.join(MIRRORS[key])} ({mine!r})")
        return native
    if isinstance(native, smelt.Config):
        native = native.to_dict()
    if not isinstance(native, dict):
        raise smelt.ConfigError(f"smelt = {type(native).__name__}: must be a native smelt config (a dict)")
    wrapped = dict(copies, model_type="smelt", smelt=native)
    return smelt.read_config(wrapped, source="config.json").to_dict()


def _routing(routing: Any) -> dict:
    out = dict(ROUTING)
    if routing is None:
        return out
    if not isinstance(routing, dict):
        raise ValueError(f"routing = {routing!r}: must be a dict with keys among {', '.join(ROUTING)}")
    for key, value in routing.items():
        if key not in ROUTING:
            raise ValueError(f"routing.{key}: unknown; the keys are {', '.join(ROUTING)}")
        out[key] = value
    if out["sigmoid_form"] not in ("llama4", "deepseek"):
        raise ValueError(f"routing.sigmoid_form = {out['sigmoid_form']!r}: must be 'llama4' or 'deepseek'")
    clamp = out["clamped_swiglu"]
    if clamp is not None and (not isinstance(clamp, (list, tuple)) or len(clamp) != 2):
        raise ValueError(f"routing.clamped_swiglu = {clamp!r}: must be null or [alpha, limit]")
    return out
