"""examples/train/train_pair.py as written (docs/training.md): a shrunk Baseline and its derived looped twin
trained 50 steps with transformers' Trainer, and 20 under torchrun with DDP (2 processes, gloo) and with FSDP, whose
gathered weights equal a single-process run. Skipped without torch, transformers and accelerate."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import smelt  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(ROOT, "examples", "train", "train_pair.py")

COMMON = ["--steps", "50", "--seq", "32", "--batch", "4"]


def run(out, *extra, procs: int = 1) -> None:
    launch = [sys.executable] if procs == 1 else [sys.executable, "-m", "torch.distributed.run",
                                                  "--nproc-per-node", str(procs)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(launch + [SCRIPT, *COMMON, "--out", str(out), *extra], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def log(out, name: str) -> dict:
    with open(os.path.join(out, name, "log.json")) as f:
        return json.load(f)


def ranks(out, name: str, procs: int) -> list[dict]:
    found = []
    for r in range(procs):
        with open(os.path.join(out, name, f"rank{r}.json")) as f:
            found.append(json.load(f))
    return found


def falls(steps: list[dict]) -> bool:
    first = sum(s["loss"] for s in steps[:5]) / 5
    last = sum(s["loss"] for s in steps[-5:]) / 5
    return last < 0.6 * first  # 5.5 nats (ln 256 = 5.55 at the start) to about 2


def test_one_process_with_the_trainer(tmp_path):
    run(tmp_path)
    for name in ("baseline", "looped"):
        entry = log(tmp_path, name)
        assert entry["engine"] == "trainer" and entry["world"] == 1 and len(entry["steps"]) == 50
        assert falls(entry["steps"])
        assert all(s["tokens_per_s"] > 0 for s in entry["steps"])
        # The saved model is the trained one, a SmeltForCausalLM checkpoint of the config smelt counts.
        saved = json.load(open(os.path.join(tmp_path, name, "config.json")))
        assert saved["model_type"] == "smelt"
        assert entry["params"] == smelt.count(saved["smelt"]).to_dict()["params"]["total"]
    looped = json.load(open(os.path.join(tmp_path, "looped", "config.json")))["smelt"]
    assert looped["loop"] == {"span": "2-3", "count": 2, "residual_scale": 0.5}  # the middle half of 4, twice
    assert log(tmp_path, "looped")["pair_mismatch_pct"] < 0.5  # matched: 0.37% (docs/training.md)


# The parallel runs take 20 steps (the last five's mean loss is then about 0.52 of the first five's, so `falls` holds
# as at 50): equality with one process, or between the replicas, needs no more.
SHORT = ["--steps", "20"]


def test_ddp_keeps_the_replicas_identical(tmp_path):
    run(tmp_path, "--parallel", "ddp", *SHORT, procs=2)
    for name in ("baseline", "looped"):
        entry = log(tmp_path, name)
        assert entry["world"] == 2 and falls(entry["steps"])
        r0, r1 = ranks(tmp_path, name, 2)
        assert r0["digest"] == r1["digest"]  # every weight bit for bit after 50 steps
        assert r0["params_held"] == r1["params_held"] == entry["params"]  # a whole replica each


def test_fsdp_shards_every_weight_and_equals_one_process(tmp_path):
    from safetensors.torch import load_file

    run(tmp_path / "fsdp", "--parallel", "fsdp", "--dtype", "float64", *SHORT, procs=2)
    run(tmp_path / "one", "--engine", "torch", "--dtype", "float64", *SHORT)
    for name in ("baseline", "looped"):
        entry = log(tmp_path / "fsdp", name)
        assert entry["parallel"] == "fsdp" and falls(entry["steps"])
        held = [r["params_held"] for r in ranks(tmp_path / "fsdp", name, 2)]
        assert sum(held) == entry["params"] and min(held) > 0  # the shards sum to smelt's count
        sharded = load_file(os.path.join(tmp_path, "fsdp", name, "model.safetensors"))
        alone = load_file(os.path.join(tmp_path, "one", name, "model.safetensors"))
        assert sharded.keys() == alone.keys()
        assert max((sharded[k] - alone[k]).abs().max().item() for k in alone) < 1e-6
