"""smelt.hf on hostile folders and values (docs/training.md): save() never writes through a file already in the
folder and leaves it whole on a failure; from_pretrained compares the checkpoint's tensors with the config before
it builds the model, and refuses integer tensors; SmeltConfig's init_seed and routing are checked; a with_code
checkpoint loaded without smelt checks its config.json by smelt's rules. Skipped without torch and transformers."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import smelt  # noqa: E402
import smelt.hf as sh  # noqa: E402
from torch_support import example  # noqa: E402

sh.register()
Auto = transformers.AutoModelForCausalLM
TINY = example("train/tiny-baseline.json")  # 4 layers, H 128, V 256, 8 experts from layer 2


def native() -> dict:
    return smelt.read_config(TINY).to_dict()


def saved(folder, config: dict | None = None):
    """A small checkpoint: save_pretrained's weights and config.json."""
    model = Auto.from_config(sh.SmeltConfig(smelt=config or native()))
    model.save_pretrained(folder)
    return folder


def edit(folder, **fields) -> None:
    """config.json with native fields changed, their transformers copies with them (a consistent edit)."""
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    cfg["smelt"].update(fields)
    copies = {"vocab_size": "vocab_size", "hidden_size": "hidden_size", "num_layers": "num_hidden_layers"}
    cfg.update({copies[k]: v for k, v in fields.items() if k in copies})
    path.write_text(json.dumps(cfg))


# save(): a unique staging folder, nothing written through an existing file


def test_save_never_writes_through_an_existing_tmp_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json.tmp").symlink_to(victim)
    written = sh.save(TINY, folder)
    assert victim.read_text() == "VICTIM\n"
    assert not os.path.islink(written) and json.loads(open(written).read())["model_type"] == "smelt"
    assert os.readlink(folder / "config.json.tmp") == str(victim)  # someone else's file, left alone
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "config.json.tmp"]


def test_a_link_named_like_a_file_is_replaced_and_its_target_kept(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").symlink_to(victim)
    sh.save(TINY, folder)
    assert victim.read_text() == "VICTIM\n" and not os.path.islink(folder / "config.json")


def test_a_tmp_directory_does_not_matter_and_a_config_json_directory_is_refused_before_any_write(tmp_path):
    (tmp_path / "a" / "config.json.tmp").mkdir(parents=True)
    sh.save(TINY, tmp_path / "a", with_code=True)
    assert (tmp_path / "a" / "config.json").is_file() and (tmp_path / "a" / "modeling_smelt.py").is_file()
    (tmp_path / "b" / "config.json").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as e:
        sh.save(TINY, tmp_path / "b", with_code=True)
    assert e.value.filename == str(tmp_path / "b" / "config.json")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["config.json"]  # no code file, no staging folder


def test_a_failure_part_way_through_with_code_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"
    sh.save(TINY, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real_open, opened = builtins.open, []

    def full_disk(file, mode="r", *args, **kwargs):
        if "x" in mode:
            opened.append(file)
            if len(opened) == 5:
                raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", full_disk)
    other = smelt.read_config(TINY).to_dict()
    other["name"] = "another"
    with pytest.raises(OSError, match="No space left on device"):
        sh.save(other, folder, with_code=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # the old config.json, nothing else
    assert len(opened) == 5 and all(os.path.dirname(f) != str(folder) for f in opened)  # written in a staging folder


# from_pretrained: the checkpoint's tensors against the config, before the model is built


def test_a_config_edited_to_a_huge_width_is_refused_before_anything_is_allocated(tmp_path):
    folder = saved(tmp_path)
    edit(folder, hidden_size=65536, vocab_size=16777216)  # 4 TiB of embedding in float32
    start = time.perf_counter()
    with pytest.raises(ValueError) as e:
        Auto.from_pretrained(folder)
    assert time.perf_counter() - start < 30
    message = str(e.value)
    assert message.startswith("weights do not fit the config (")
    assert "model.embed.weight: checkpoint shape (256, 128), this config's (16777216, 65536)" in message


def test_a_config_edited_to_a_million_experts_is_refused_before_any_module_is_built(tmp_path):
    folder = saved(tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    edit(folder, moe=dict(cfg["smelt"]["moe"], num_experts=1 << 20, top_k=2))
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^weights do not fit the config: it builds at least 6291471 tensors, the "
                       r"checkpoint holds 114$"):
        Auto.from_pretrained(folder)
    assert time.perf_counter() - start < 30


def test_more_layers_in_the_config_than_in_the_checkpoint_are_named(tmp_path):
    folder = saved(tmp_path)
    edit(folder, num_layers=5)
    with pytest.raises(ValueError, match=r"^weights do not fit the config \(\d+ tensors\): model.layers.4.\S+: not "
                       r"in the checkpoint"):
        Auto.from_pretrained(folder)


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.int32])
def test_an_integer_or_boolean_tensor_is_refused_by_name(tmp_path, dtype):
    from safetensors.torch import load_file, save_file

    folder = saved(tmp_path)
    weights = load_file(folder / "model.safetensors")
    weights["model.final_norm.weight"] = weights["model.final_norm.weight"].to(dtype)
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    code = {torch.int64: "I64", torch.bool: "BOOL", torch.int32: "I32"}[dtype]
    with pytest.raises(ValueError, match=rf"^weights do not fit the config \(1 tensors\): model.final_norm.weight: "
                       rf"dtype {code} in the checkpoint: must be a floating-point type$"):
        Auto.from_pretrained(folder)


def test_a_good_checkpoint_still_loads_with_its_weights(tmp_path):
    model = Auto.from_config(sh.SmeltConfig(smelt=native(), init_seed=5))
    model.save_pretrained(tmp_path)
    back = Auto.from_pretrained(tmp_path)
    for (k, a), (_, b) in zip(model.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), k


# SmeltConfig's own fields


@pytest.mark.parametrize(
    "seed, shown",
    [("x", "'x'"), (2**64, "18446744073709551616"), (2**63, "9223372036854775808"), (-1, "-1"), (True, "True"),
     (1.0, "1.0")],
)
def test_init_seed_must_be_an_integer_in_the_generator_s_range(seed, shown):
    with pytest.raises(smelt.ConfigError) as e:
        sh.SmeltConfig(smelt=native(), init_seed=seed)
    assert str(e.value) == f"init_seed = {shown}: must be an integer between 0 and 9223372036854775807"
    assert e.value.violations == [("init_seed", shown, "must be an integer between 0 and 9223372036854775807")]


def test_init_seed_takes_a_numpy_integer_and_refuses_a_numpy_bool():
    np = pytest.importorskip("numpy")
    assert sh.SmeltConfig(smelt=native(), init_seed=np.int64(7)).init_seed == 7
    with pytest.raises(smelt.ConfigError, match=r"^init_seed = (np\.)?True_?: must be an integer"):
        sh.SmeltConfig(smelt=native(), init_seed=np.True_)


@pytest.mark.parametrize(
    "moe, message",
    [
        ({"clamped_swiglu": {"alpha": "a", "limit": 7}}, 'smelt.moe.clamped_swiglu.alpha = "a": must be a number'),
        ({"clamped_swiglu": {"alpha": 1.702, "limit": -1}},
         "smelt.moe.clamped_swiglu.limit = -1: must be a finite number above 0"),
        ({"clamped_swiglu": [1.702, 7.0]}, "smelt.moe.clamped_swiglu = [1.702,7.0]: must be an object"),
        ({"renormalize": "no"}, 'smelt.moe.renormalize = "no": must be true or false'),
        ({"router_form": "llama4"}, 'smelt.moe.router_form = "llama4": needs moe.router_score "sigmoid", '
         "moe.router_bias false and moe.renormalize false (Llama 4's router; they are \"softmax\", false, false)"),
    ],
)
def test_routing_fields_are_checked_with_the_native_config(moe, message):
    cfg = native()
    cfg["moe"].update(moe)
    with pytest.raises(smelt.ConfigError) as e:
        sh.SmeltConfig(smelt=cfg)
    assert str(e.value) == message


def test_routing_beside_the_native_config_is_refused_not_dropped():
    # An older config.json's "routing" block: its choices would be lost silently, so it is refused, named.
    with pytest.raises(smelt.ConfigError) as e:
        sh.SmeltConfig(smelt=native(), routing={"renormalize": False})
    assert str(e.value) == ("routing = {'renormalize': False}: is no longer read: the routing choices are fields of "
                            "the native config's moe block (smelt.moe.router_form, renormalize, clamped_swiglu; "
                            "docs/config.md)")


# A with_code checkpoint where smelt is not installed


NO_SMELT = """
import json, sys
sys.modules['smelt'] = None  # any import of smelt raises ImportError
import transformers
for folder in json.loads(sys.argv[1]):
    try:
        transformers.AutoConfig.from_pretrained(folder, trust_remote_code=True)
        print("ran")
    except ValueError as e:
        print("refused:", str(e).splitlines()[0])
"""


def test_a_with_code_checkpoint_without_smelt_refuses_what_smelt_refuses(tmp_path):
    base = native()
    bad = {
        "pattern": dict(base, attention=dict(base["attention"], pattern=["__class__"])),
        "policy": dict(base, loop={"span": "1-4", "count": 2, "kv_policy": "exec"}),
        "span": dict(base, loop={"span": "1-5", "count": 2}),
        "count": dict(base, loop={"span": "1-4", "count": 1000000}),
        "layers": dict(base, num_layers=100000),
        "good": dict(base, loop={"span": "2-3", "count": 2}),
    }
    folders = []
    for name, cfg in bad.items():
        folder = tmp_path / name
        sh.save(native(), folder, with_code=True)
        written = json.loads((folder / "config.json").read_text())
        written["smelt"] = cfg
        written["num_hidden_layers"] = cfg["num_layers"]
        (folder / "config.json").write_text(json.dumps(written))
        folders.append(str(folder))
    env = dict(os.environ, HF_MODULES_CACHE=str(tmp_path / "modules"), PYTHONPATH="")
    done = subprocess.run([sys.executable, "-c", NO_SMELT, json.dumps(folders)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "refused: smelt.attention.pattern[0] = \"__class__\": must be one of full, sliding, chunked",
        "refused: smelt.loop.kv_policy = \"exec\": must be one of per_visit, shared, active",
        "refused: smelt.loop.span = \"1-5\": must satisfy 1 <= first <= last <= num_layers = 4",
        "refused: smelt.loop.count = 1000000: must be at most 1024",
        "refused: smelt.num_layers = 100000: must be at most 65536",
        "ran",
    ]
    # smelt refuses each the same way, its first line the same
    for name, cfg in bad.items():
        if name == "good":
            continue
        with pytest.raises(smelt.ConfigError) as e:
            sh.SmeltConfig(smelt=cfg)
        assert str(e.value).splitlines()[0] in done.stdout


def test_a_top_level_loop_block_or_a_disagreeing_head_dim_in_config_json_is_refused(tmp_path):
    # smelt's reader refuses a top-level loop block for model_type "smelt" and compares head_dim with the native
    # block; SmeltConfig passes those keys to it, so from_pretrained of a hand-edited config.json refuses them too.
    for key, value in (("loop", {"first_layer": 1, "last_layer": 2, "count": 3}), ("head_dim", 7)):
        folder = saved(tmp_path / key)
        path = folder / "config.json"
        path.write_text(json.dumps(dict(json.loads(path.read_text()), **{key: value})))
        with pytest.raises(smelt.ConfigError) as e:
            Auto.from_pretrained(folder)
        assert str(e.value).splitlines()[-1].strip().startswith(f"{key} = ")
