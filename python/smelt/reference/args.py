"""The range checks of smelt.torch's integer arguments, made before any arithmetic on them."""

from __future__ import annotations

from typing import Any

try:  # smelt's error class; a checkpoint's own copy of this code (smelt.hf, with_code) runs without smelt
    from smelt import ConfigError as _Refused
except ImportError:

    class _Refused(ValueError):  # type: ignore[no-redef]
        def __init__(self, message: str, violations: Any = ()) -> None:
            super().__init__(message)

MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed's signed range, and check-model's --seed
MAX_CONTEXT = 2**30  # smelt's own bound on a context (include/smelt/detail/bounds.hpp, kMaxContext)


def check_int(function: str, key: str, value: Any, low: int, high: int | None = None) -> None:
    """Raises smelt.ConfigError naming ``function``'s argument unless ``value`` is an int in [low, high].

    A bool is refused though Python counts it as an int: ``context=True`` is a mistake, not one token.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"of at least {low}" if high is None else f"between {low} and {high}"
        rule = f"must be an integer {bound}"
        raise _Refused(f"{function}(): {key} = {value!r}: {rule}", [(key, repr(value), rule)])
