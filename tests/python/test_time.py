"""smelt.time: the CLI's report (tests/python/test_cli_parity.py compares them byte for byte), its errors, and
what a loop does to it (docs/time.md)."""

from __future__ import annotations

import json

import pytest

import smelt
from conftest import EXAMPLES, cli_json, same_bytes


def test_a_looped_twin_pays_its_extra_visits() -> None:
    kw = dict(seq=4096, microbatches=8, decode_batch=64)
    base = smelt.time(EXAMPLES / "smelt-baseline-12l.json", "h200", **kw)
    looped = smelt.time(EXAMPLES / "smelt-looped-12l.json", "h200", **kw)
    # 18 executed layers against 12: one forward attention_out row per kind of visit, run (visits x 8 micro-batches)
    # times; the looped twin's later visits are counted in times, not written again.
    def visits(r: smelt.TimeReport) -> int:
        rows = [op for op in r.training.ops if op["name"] == "attention_out" and not op["backward"]]
        return sum(op["times"] for op in rows) // 8

    assert visits(base) == 12 and visits(looped) == 18
    # docs/time.md's worked example: 1.163x the training step and 1.30x the decode step, at matched FLOPs.
    assert looped.training_seconds_per_token / base.training_seconds_per_token == pytest.approx(1.163, abs=0.001)
    assert looped.decode_seconds_per_token / base.decode_seconds_per_token == pytest.approx(1.301, abs=0.001)


def test_errors_name_the_keyword_and_the_device() -> None:
    with pytest.raises(smelt.ConfigError, match=r"imbalance = 0.5: must be in \[1, 1000000\]"):
        smelt.time(EXAMPLES / "tiny-moe.json", "h100", imbalance=0.5)
    with pytest.raises(smelt.ConfigError, match='did you mean "h200"'):
        smelt.time(EXAMPLES / "tiny-moe.json", "h2000")
    with pytest.raises(smelt.ConfigError, match="decode_batchh"):
        smelt.time(EXAMPLES / "tiny-moe.json", "h100", decode_batchh=4)


def test_derive_reports_each_candidates_time_as_smelt_time_predicts_it() -> None:
    # The same device, layout and options: derive's figures are smelt.time's of the Baseline and of the best config.
    kw = dict(seq=1024, micro_batch=2, decode_batch=16)
    r = smelt.derive(EXAMPLES / "smelt-baseline-12l.json", hardware="h200", **kw)
    base = smelt.time(EXAMPLES / "smelt-baseline-12l.json", "h200", **kw)
    best = smelt.time(r.best_config, "h200", **kw)
    t = r.best.training_seconds_per_token
    assert (t.baseline, t.candidate) == (base.training_seconds_per_token, best.training_seconds_per_token)
    assert t.mismatch_pct == pytest.approx(100 * (t.candidate - t.baseline) / t.baseline, rel=1e-12)
    d = r.best.decode_seconds_per_token
    assert (d.baseline, d.candidate) == (base.decode_seconds_per_token, best.decode_seconds_per_token)
    # Without a device, no time figures.
    plain = smelt.derive(EXAMPLES / "smelt-baseline-12l.json")
    assert plain.best.training_seconds_per_token is None and plain.best.time_note is None


def test_derive_time_budget_and_limit() -> None:
    limited = smelt.derive(EXAMPLES / "smelt-baseline-12l.json", hardware="h200", time_limit=1.0)
    for c in [limited.best, *limited.alternatives]:
        assert c.training_seconds_per_token.candidate <= c.training_seconds_per_token.baseline
    matched = smelt.derive(EXAMPLES / "smelt-baseline-12l.json", hardware="h200", match=["flops", "params", "kv", "time"])
    assert matched.recipe.match == ["flops", "params", "kv", "time"]
    assert abs(matched.best.training_seconds_per_token.mismatch_pct) <= matched.best.max_abs_mismatch_pct + 1e-9
    with pytest.raises(smelt.ConfigError, match=r'MatchOptions::match = "time": needs a device to predict time on'):
        smelt.derive(EXAMPLES / "smelt-baseline-12l.json", match=["flops", "time"])
    with pytest.raises(smelt.ConfigError, match='MatchOptions::hardware = "h2000".*did you mean "h200"'):
        smelt.derive(EXAMPLES / "smelt-baseline-12l.json", hardware="h2000")


def test_a_calibration_file_is_a_device(tmp_path) -> None:
    # What `bench calibrate --quick` writes: its spec with its GEMM table, for smelt.time as for the CLI.
    calibration = cli_json("bench", "calibrate", "--quick", "--repetitions", "1")
    assert calibration["kind"] == "calibration" and len(calibration["gemm"]["flops_per_second"]) == 8
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(calibration))
    r = smelt.time(EXAMPLES / "tiny-moe.json", str(path), activation_dtype="fp32")
    assert r.hardware.calibrated and r.hardware.calibration == f"{path} (8 GEMM rates, fp32)"
    same_bytes(r.to_dict(), cli_json("time", str(EXAMPLES / "tiny-moe.json"), "--hardware", str(path),
                                     "--activation-dtype", "fp32", "--json"))
