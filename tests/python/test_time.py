"""smelt.time: the CLI's report (tests/python/test_cli_parity.py compares them byte for byte), its errors, and
what a loop does to it (docs/time.md)."""

from __future__ import annotations

import pytest

import smelt
from conftest import EXAMPLES


def test_a_looped_twin_pays_its_extra_visits() -> None:
    kw = dict(seq=4096, microbatches=8, decode_batch=64)
    base = smelt.time(EXAMPLES / "smelt-baseline-12l.json", "h200", **kw)
    looped = smelt.time(EXAMPLES / "smelt-looped-12l.json", "h200", **kw)
    # 18 executed layers against 12: the looped twin's forward ops hold 18 visits' rows, the Baseline's 12.
    visits = lambda r: {(op["layer"], op["visit"]) for op in r.training.ops if op["layer"] > 0}  # noqa: E731
    assert len(visits(base)) == 12 and len(visits(looped)) == 18
    # docs/time.md's worked example: 1.165x the training step and 1.30x the decode step, at matched FLOPs.
    assert looped.training_seconds_per_token / base.training_seconds_per_token == pytest.approx(1.165, abs=0.001)
    assert looped.decode_seconds_per_token / base.decode_seconds_per_token == pytest.approx(1.301, abs=0.001)


def test_errors_name_the_keyword_and_the_device() -> None:
    with pytest.raises(smelt.ConfigError, match=r"imbalance = 0.5: must be in \[1, 1000000\]"):
        smelt.time(EXAMPLES / "tiny-moe.json", "h100", imbalance=0.5)
    with pytest.raises(smelt.ConfigError, match='did you mean "h200"'):
        smelt.time(EXAMPLES / "tiny-moe.json", "h2000")
    with pytest.raises(smelt.ConfigError, match="decode_batchh"):
        smelt.time(EXAMPLES / "tiny-moe.json", "h100", decode_batchh=4)
