"""Bad input to `python -m smelt check-model` (docs/reference-model.md, "check-model"): each case exits with its
code (2 bad input, 4 a file that cannot be read) and its exact message, with nothing on standard output, and no
model is built. Also: smelt.torch.shrink keeps every config smelt accepts valid, tiny and with its counts.
Skipped where torch is missing."""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from smelt.__main__ import main  # noqa: E402
from torch_support import example, run_check  # noqa: E402

from test_torch_random import draw  # noqa: E402

TINY = example("tiny-moe.json")


run = run_check


def usage_error(capsys, *argv: str) -> tuple[int, str, str]:
    """argparse's errors exit through SystemExit; the last line of standard error is the message."""
    with pytest.raises(SystemExit) as e:
        main(["check-model", *argv])
    out, err = capsys.readouterr()
    return e.value.code, out, err.splitlines()[-1]


@pytest.fixture
def no_build(monkeypatch):
    """A check that comes too late would build the model: fail at once instead of building it for minutes."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was built")

    monkeypatch.setattr(st, "build_model", refuse)
    monkeypatch.setattr(st, "measure", refuse)


def test_a_shrunk_copy_still_too_large_exits_2(capsys, tmp_path, no_build):
    # tiny-moe (H = 64, so shrink divides nothing) with 50,000 experts in each of its 3 MoE layers:
    # experts 3 * 50,000 * 3*64*32 = 921,600,000, router 3 * 64 * 50,000 = 9,600,000, and the rest of
    # tiny-moe's 369,728 without its experts (147,456) and router (1,536): 931,420,736 parameters,
    # 4 bytes each = 3.47 GiB. Before the check, --shrink skipped every size limit and built it.
    cfg = smelt.read_config(TINY).to_dict()
    cfg["moe"]["num_experts"] = 50_000
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(cfg))
    assert run(capsys, str(path), "--shrink") == (
        2,
        "",
        f"smelt: error: '{path}' shrunk still has 931,420,736 parameters, more than the 250,000,000 check-model "
        "builds (about 3.5 GiB of float32 weights): shrink divides the widths but keeps the 4 layers and 50000 "
        "experts; check a config with fewer\n",
    )


def test_the_largest_shrunk_example_is_under_the_limit():
    # DeepSeek-V3 shrunk (168,132,576 parameters with its MTP module) runs: the limit refuses none of the examples.
    p = smelt.count(st.shrink(example("hf/deepseek-v3.json"))).to_dict()["params"]
    assert p["total"] + p["mtp"] == 168_132_576 < 250_000_000


def test_context_above_a_shrunk_context_length_names_the_shrunk_copy(capsys, no_build):
    # Llama 3.1 says 131,072 tokens; its shrunk copy holds 32, and the message must say whose 32 it is.
    path = example("hf/llama-3.1-8b.json")
    assert run(capsys, path, "--shrink", "--context", "33") == (
        2,
        "",
        f"smelt: error: --context = 33: must be at most the shrunk copy's context_length = 32 ('{path}')\n",
    )


def test_an_unknown_option_names_the_nearest(capsys):
    assert usage_error(capsys, TINY, "--contxt", "3") == (
        2,
        "",
        "python -m smelt check-model: error: unrecognized arguments: --contxt 3 (did you mean '--context'?)",
    )
    assert usage_error(capsys, TINY, "--shrinkk") == (
        2,
        "",
        "python -m smelt check-model: error: unrecognized arguments: --shrinkk (did you mean '--shrink'?)",
    )
    # nothing near: argparse's message alone
    assert usage_error(capsys, TINY, "--zzzz") == (
        2,
        "",
        "python -m smelt check-model: error: unrecognized arguments: --zzzz",
    )


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--context", "1.5"], "argument --context: invalid int value: '1.5'"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    ],
)
def test_non_integers_exit_2(capsys, argv, message):
    assert usage_error(capsys, TINY, *argv) == (2, "", f"python -m smelt check-model: error: {message}")


def test_no_config_exits_2(capsys):
    assert usage_error(capsys) == (
        2,
        "",
        "python -m smelt check-model: error: the following arguments are required: CONFIG",
    )


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--context", "-1"], "--context = -1: must be at least 1"),
        (
            ["--context", str(10**12)],
            f"--context = 1000000000000: must be at most the config's context_length = 8 ('{TINY}')",
        ),
        (["--seed", str(2**63)], "--seed = 9223372036854775808: must be between 0 and 9223372036854775807"),
    ],
)
def test_out_of_range_options_exit_2(capsys, no_build, argv, message):
    assert run(capsys, TINY, *argv) == (2, "", f"smelt: error: {message}\n")


@pytest.mark.parametrize(
    "text,message",
    [
        ("{", "  {path}:2:1: malformed JSON: syntax error while parsing object key - unexpected end of input; "
              "expected string literal"),
        ("[1, 2]", '  {path}: cannot tell the format: expected "schema_version" (smelt native JSON), '
                   '"model_type" (Hugging Face config.json) or "dim" and "n_layers" (ExecuTorch params.json)'),
        ('{"model_type": "foo", "hidden_size": 64}',
         '  model_type = "foo": not supported; supported: dbrx, deepseek_v2, deepseek_v3, gpt_oss, huginn_raven, '
         "llama, llama4, llama4_text, mistral, mixtral, nanbeige, olmoe, ouro, qwen2, qwen2_moe, qwen3, qwen3_moe, "
         "smelt"),
    ],
)
def test_a_bad_file_among_several_stops_all_before_output(capsys, tmp_path, text, message):
    # The good config first: it is not measured or printed, since every input is read before anything runs.
    path = tmp_path / "bad.json"
    path.write_text(text + "\n")
    assert run(capsys, TINY, str(path), "--json") == (
        2,
        "",
        f"smelt: error: while reading config '{path}':\n" + message.format(path=path) + "\n",
    )


def _scaled(seed: int) -> dict:
    """A random valid config of test_torch_random.draw with its widths, vocabulary, context, window and chunk
    multiplied by 64 (or by another factor up to 5,000), some widths left small: the shapes shrink must map."""
    cfg, _ = draw(seed)
    r = random.Random(seed)
    k = r.choice([64, 64, r.randint(2, 5000)])
    c = json.loads(json.dumps(cfg))
    for key in ("hidden_size", "vocab_size", "context_length"):
        c[key] *= k
    a = c["attention"]
    for key in ("head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        if a.get(key):
            a[key] *= r.choice([k, 1])  # widths of 1 after the division: head_dim 1, MLA ranks 1
    a["window"], a["chunk"] = a["window"] * k, a["chunk"] * k
    c["ffn"]["dense_width"] *= k
    if c.get("moe"):
        c["moe"]["expert_width"] *= r.choice([k, 1])  # an expert width that rounds to 0 before the floor of 1
        c["moe"]["shared_width"] *= k
    return smelt.read_config(c).to_dict()


def test_shrink_keeps_scaled_random_configs_valid_and_their_counts():
    # 300 draws (about 1 s): shrink's own read_config refuses anything invalid; the copy is tiny, and every count
    # the ratios depend on is the original's.
    for seed in range(300):
        c = _scaled(seed)
        s = st.shrink(c)
        assert s["hidden_size"] <= 128 and s["vocab_size"] <= 1024 and s["context_length"] <= 32, seed
        assert s["attention"]["window"] <= 8 and s["attention"]["chunk"] <= 8, seed
        for key in ("num_layers", "loop", "mtp_modules"):
            assert s.get(key) == c.get(key), (seed, key)
        for key in ("num_heads", "num_kv_heads", "pattern"):
            assert s["attention"].get(key) == c["attention"].get(key), (seed, key)
        for key in ("num_experts", "top_k", "num_shared_experts", "layers"):
            assert (s.get("moe") or {}).get(key) == (c.get("moe") or {}).get(key), (seed, key)


def test_too_many_expert_modules_exit_2(capsys, tmp_path, no_build):
    # Few parameters, many modules: tiny-moe at H = 8 with 20,000 experts of width 1 has 1,921,192 parameters,
    # far under either limit, but one nn.Module per expert in 3 MoE layers, with the shared one: 3 * 20,001 =
    # 60,003 modules, more than 50,000 (100,000 experts in one layer took 21 s to build on the meta device and
    # 16 s more with weights, 1.6 GB; 1,000,000 would take minutes and 15 GB).
    cfg = smelt.read_config(TINY).to_dict()
    cfg["hidden_size"], cfg["vocab_size"] = 8, 16
    cfg["attention"]["head_dim"] = 2
    cfg["ffn"]["dense_width"] = 1
    cfg["moe"].update(num_experts=20_000, expert_width=1, shared_width=1)
    path = tmp_path / "many.json"
    path.write_text(json.dumps(cfg))
    assert smelt.count(smelt.read_config(str(path))).to_dict()["params"]["total"] == 1_921_192
    message = (
        f"smelt: error: '{path}' has 60,003 expert modules (20,000 routed and 1 shared experts in each of 3 MoE "
        "layers), more than the 50,000 check-model builds (one nn.Module each, about 0.4 ms and 15 KB): check a "
        "config with fewer experts or MoE layers\n"
    )
    assert run(capsys, str(path)) == (2, "", message)
    assert run(capsys, str(path), "--shrink") == (2, "", message)


def test_the_examples_are_under_the_module_and_visit_limits():
    # DeepSeek-V3: 256 routed + 1 shared expert in 58 MoE layers and its MTP module's layer: 257 * 59 = 15,163;
    # Ouro-2.6B: 48 layers x 4 steps = 192 visits: the most of any shrunk example (the agreement table runs them all).
    from smelt._check_model import MAX_EXPERT_MODULES, MAX_VISITS, _expert_modules

    cfg = st.shrink(example("hf/deepseek-v3.json"))
    assert _expert_modules(cfg, smelt.count(cfg).to_dict()) == (15_163, 256, 1, 59) and 15_163 < MAX_EXPERT_MODULES
    most = (0, 0)
    for path in glob.glob(example("*.json")) + glob.glob(example("hf/*.json")):
        c = st.shrink(path)
        report = smelt.count(c).to_dict()
        visits = report["layers_executed"] + c.get("mtp_modules", 0)
        most = max(most[0], _expert_modules(c, report)[0]), max(most[1], visits)
    assert most == (15_163, 192) and 192 < MAX_VISITS


@pytest.mark.parametrize(
    "kwargs,message",
    [
        # max_hidden = -1 looped for ever (hidden // f > -1 holds for every f); 0 and a bool as well-formed
        # nonsense; max_vocab = 0 gave read_config's "vocab_size = 0: must be positive", naming no argument.
        ({"max_hidden": -1}, "shrink(): max_hidden = -1: must be an integer of at least 1"),
        ({"max_hidden": 0}, "shrink(): max_hidden = 0: must be an integer of at least 1"),
        ({"max_hidden": 2.5}, "shrink(): max_hidden = 2.5: must be an integer of at least 1"),
        ({"max_vocab": 0}, "shrink(): max_vocab = 0: must be an integer of at least 1"),
        ({"max_vocab": True}, "shrink(): max_vocab = True: must be an integer of at least 1"),
    ],
)
def test_shrink_checks_its_limits_first(kwargs, message):
    with pytest.raises(smelt.ConfigError) as e:
        st.shrink(TINY, **kwargs)
    assert str(e.value) == message
    assert e.value.violations == [(next(iter(kwargs)), repr(next(iter(kwargs.values()))), message.split(": ")[-1])]


SEED_RULE = "must be an integer between 0 and 9223372036854775807"
CONTEXT_RULE = "must be an integer between 1 and 1073741824"


@pytest.mark.parametrize(
    "call,key,value,rule",
    [
        # measure's context reached smelt.count, whose message named context_length, a field of the config;
        # a float met a nanobind TypeError, a bool ran as 1 token.
        ("measure", "context", 0, CONTEXT_RULE),
        ("measure", "context", 1.5, CONTEXT_RULE),
        ("measure", "context", True, CONTEXT_RULE),
        ("measure", "context", 2**30 + 1, CONTEXT_RULE),
        # seeds torch's manual_seed cannot hold ("Overflow when unpacking long") or takes as another (-1);
        # the same range as check-model's --seed.
        ("measure", "seed", -1, SEED_RULE),
        ("measure", "seed", 2**64, SEED_RULE),
        ("build_model", "seed", 1.5, SEED_RULE),
        ("build_model", "seed", 2**63, SEED_RULE),
    ],
)
def test_measure_and_build_model_check_their_arguments_first(call, key, value, rule):
    with pytest.raises(smelt.ConfigError) as e:
        getattr(st, call)(TINY, **{key: value})
    assert str(e.value) == f"{call}(): {key} = {value!r}: {rule}"
    assert e.value.violations == [(key, repr(value), rule)]


def test_too_many_layer_visits_exit_2(capsys, tmp_path, no_build):
    # Few parameters, many visits: tiny-moe with 5 layers, all looped 1,024 times, executes 5 * 1,024 = 5,120
    # layer visits, more than 4,096 (about 10 ms each: tiny-moe's span 2-3 looped 1,024 times, 2,050 visits,
    # took 22 s; 65,536 layers looped 1,024 times would take days, and at T = 1 the score guard lets it by).
    cfg = smelt.read_config(TINY).to_dict()
    cfg["num_layers"] = 5
    cfg["loop"] = {"span": "1-5", "count": 1024, "residual_scale": 1.0}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(cfg))
    message = (
        f"smelt: error: '{path}' executes 5,120 layer visits (5 layers stored), more than the 4,096 check-model "
        "runs (about 10 ms each on a CPU): check a config with fewer layers or a smaller loop.count\n"
    )
    assert run(capsys, str(path), "--context", "1") == (2, "", message)
    assert run(capsys, str(path), "--shrink", "--context", "1") == (2, "", message)


def test_an_unreadable_file_exits_4(capsys, tmp_path):
    # A mode-000 copy of tiny-moe. root reads it anyway (no permission check applies to root), so there the
    # command runs as nobody through setpriv (util-linux); it is skipped where neither is possible.
    path = tmp_path / "secret.json"
    path.write_text(open(TINY, encoding="utf-8").read())
    path.chmod(0)
    expected = f"smelt: error: while reading config '{path}': cannot open '{path}': Permission denied\n"
    if os.geteuid() != 0:
        assert run(capsys, str(path)) == (4, "", expected)
        return
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root reads a mode-000 file")
    nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    # nobody must reach the package: a venv under /root (mode 700) is out of its reach.
    probe = subprocess.run([*nobody, sys.executable, "-c", "import smelt"], capture_output=True, text=True, cwd="/")
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot import smelt from {sys.executable}: {probe.stderr.strip()[-200:]}")
    done = subprocess.run([*nobody, sys.executable, "-m", "smelt", "check-model", str(path)],
                          capture_output=True, text=True, cwd="/")
    assert (done.returncode, done.stdout, done.stderr) == (4, "", expected)


def test_a_context_whose_logits_would_not_fit_exits_2(capsys, tmp_path, no_build):
    # One Llama layer at H = 16 with a vocabulary of 1,000,000: 32,000,368 parameters, under the 50 M limit, and
    # one head of T x 1,000,000 logits, kept with their gradient: 8 bytes each (measured: 1.5 GB more peak memory
    # at T = 256 than at T = 64, 7.8 bytes per logit). At T = 512, 8 * 512 * 1,000,000 = 4,096,000,000 bytes =
    # 3.8 GiB > 2 GiB; the scores guard saw 12 * 1 head * 512^2 = 3 MiB and let it by (at T = 4,096: 32 GB).
    cfg = smelt.read_config(example("hf/llama-3.1-8b.json")).to_dict()
    cfg.update(num_layers=1, hidden_size=16, vocab_size=1_000_000, context_length=4096)
    cfg["attention"].update(num_heads=1, num_kv_heads=1, head_dim=2)
    cfg["ffn"]["dense_width"] = 4
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps(cfg))
    assert smelt.count(smelt.read_config(str(path))).to_dict()["params"]["total"] == 32_000_368
    assert run(capsys, str(path), "--context", "512") == (
        2,
        "",
        "smelt: error: --context = 512: the reference model keeps the logits of every output head (the LM head "
        "and each MTP module's) and their gradients for the backward, 8 bytes per token and vocabulary entry, "
        f"about 3.8 GiB for '{path}', more than the 2 GiB check-model allows: use a smaller --context\n",
    )


def test_a_context_whose_activations_would_not_fit_exits_2(capsys, tmp_path, no_build):
    # Two Llama layers of H = 1,024 (8 heads of 128, dense width 1,024) looped 512 times: 14,717,952 parameters,
    # 1,024 visits, under every other limit. Per token and visit the backward keeps about 10 H + 3 (q + 2 kv) +
    # 4 F floats: 10,240 + 3 * 3,072 + 4,096 = 23,552 (measured: 2.4 GB more peak memory at T = 32 than at T = 8,
    # 98 KB = 24,500 floats per token and visit). At T = 32: 4 bytes * 32 * 1,024 * 23,552 = 3,087,007,744 bytes
    # = 2.9 GiB > 2 GiB; the scores guard saw 12 * 8 * 32^2 * 1,024 = 100 MiB.
    cfg = smelt.read_config(example("hf/llama-3.1-8b.json")).to_dict()
    cfg.update(num_layers=2, hidden_size=1024, vocab_size=16, context_length=4096)
    cfg["attention"].update(num_heads=8, num_kv_heads=8, head_dim=128)
    cfg["ffn"]["dense_width"] = 1024
    cfg["loop"] = {"span": "1-2", "count": 512, "residual_scale": 1.0}
    path = tmp_path / "act.json"
    path.write_text(json.dumps(cfg))
    assert run(capsys, str(path), "--context", "32") == (
        2,
        "",
        "smelt: error: --context = 32: the reference model keeps about 24,117,248 activations per token (each "
        "layer visit's norms, projections and FFN widths) for the backward, about 2.9 GiB for "
        f"'{path}', more than the 2 GiB check-model allows: use a smaller --context\n",
    )
