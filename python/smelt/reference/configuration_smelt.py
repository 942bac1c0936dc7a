"""``SmeltConfig``: a transformers configuration holding a native smelt config, loops and all (docs/training.md)."""

from __future__ import annotations

import operator
from typing import Any

from transformers import PreTrainedConfig

from .args import MAX_SEED, _Refused
from .native_config import NativeConfigError
from .native_config import read as read_native

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
# Top-level keys smelt's reader checks against the native block when a file has them (a top-level loop block is
# refused, the rest compared; src/config/hf_smelt.cpp): a hand-edited config.json must not say one thing to
# transformers and another to the model. Left in place for transformers.
CHECKED = ("loop", "loops", "max_position_embeddings", "intermediate_size", "num_key_value_heads", "head_dim")


class SmeltConfig(PreTrainedConfig):
    """``smelt``: the native config as a dict (``smelt.Config.to_dict()``), checked by smelt's reader when set
    (its ``moe`` block says how the routers route); ``init_seed``: the seeded initialisation of smelt.torch (the
    model's weights equal ``smelt.torch.build_model(smelt, seed=init_seed)``'s); ``router_aux_loss_coef``: weight
    of the MoE load-balancing loss added to the loss (0: off); ``mtp_loss_weight``: lambda of the MTP losses.

    The copies ``vocab_size``, ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads`` and
    ``tie_word_embeddings`` follow ``smelt``; one given with another value is refused, naming it.
    """

    model_type = "smelt"
    keys_to_ignore_at_inference = ["past_key_values"]

    def __init__(
        self,
        smelt: dict | None = None,
        init_seed: int = 0,
        router_aux_loss_coef: float = 0.0,
        mtp_loss_weight: float = 0.3,
        use_cache: bool = True,
        **kwargs: Any,
    ) -> None:
        if "routing" in kwargs:  # before the routing choices were native fields: refused, never dropped silently
            _refuse("routing", kwargs["routing"], "is no longer read: the routing choices are fields of the native "
                    "config's moe block (smelt.moe.router_form, renormalize, clamped_swiglu; docs/config.md)")
        copies = {k: kwargs.pop(k) for k in list(kwargs) if k in MIRRORS}
        if smelt is not None:
            smelt = _checked(smelt, copies, {k: kwargs[k] for k in CHECKED if k in kwargs})
            for key, path in MIRRORS.items():
                value: Any = smelt
                for part in path:
                    value = value[part]
                setattr(self, key, value)
        self.smelt = smelt
        self.init_seed = _seed(init_seed)
        self.router_aux_loss_coef = router_aux_loss_coef
        self.mtp_loss_weight = mtp_loss_weight
        self.use_cache = use_cache
        super().__init__(**kwargs)


def _checked(native: Any, copies: dict, checked: dict | None = None) -> dict:
    """The native config as smelt reads it (a ConfigError names each bad field as ``smelt.<field>``, a copy that
    differs by its transformers name, a top-level loop block), in smelt's canonical form. ``checked``: the keys
    of CHECKED the file has, which smelt's reader compares (without smelt, only the copies are compared)."""
    if smelt is None:  # without smelt (a checkpoint's own code): smelt's rules in pure Python (native_config.py)
        try:
            native = read_native(native, "smelt")
        except NativeConfigError as e:
            raise _Refused(str(e), e.violations) from None
        for key, value in copies.items():
            mine: Any = native
            for part in MIRRORS[key]:
                mine = mine[part]
            if value != mine or isinstance(value, bool) != isinstance(mine, bool):
                rule = f"must equal smelt.{'.'.join(MIRRORS[key])} ({_json(mine)}): the native config is the model, " \
                    "this a copy"
                raise _Refused(f"{key} = {_json(value)}: {rule}", [(key, _json(value), rule)])
        return native
    if isinstance(native, smelt.Config):
        native = native.to_dict()
    if not isinstance(native, dict):
        raise smelt.ConfigError(f"smelt = {type(native).__name__}: must be a native smelt config (a dict)")
    wrapped = dict(checked or {}, **copies, model_type="smelt", smelt=native)
    return smelt.read_config(wrapped, source="config.json").to_dict()


def _refuse(field: str, value: Any, rule: str) -> None:
    shown = repr(value)[:60]
    raise _Refused(f"{field} = {shown}: {rule}", [(field, shown, rule)])


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's too, which is no int


def _seed(value: Any) -> int:
    """init_seed: an integer in [0, 2^63), torch.Generator.manual_seed's range (a bool is refused)."""
    try:
        seed = None if _is_bool(value) else operator.index(value)
    except TypeError:
        seed = None
    if seed is None or not 0 <= seed <= MAX_SEED:
        _refuse("init_seed", value, f"must be an integer between 0 and {MAX_SEED}")
    return seed


def _json(value: Any) -> str:
    return "true" if value is True else "false" if value is False else repr(value)
