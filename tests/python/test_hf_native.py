"""smelt's pure-Python reader of the native config (python/smelt/reference/native_config.py), which a checkpoint
saved with ``with_code=True`` runs where smelt is not installed: on every example it gives the canonical dict smelt gives, and
on every bad input the same violations (field, value, rule), in the same order, as smelt's C++ reader. Needs
neither torch nor transformers: the module is loaded from its file."""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

import smelt
from conftest import EXAMPLES, ROOT

_spec = importlib.util.spec_from_file_location("smelt_native_config",
                                               ROOT / "python" / "smelt" / "reference" / "native_config.py")
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)

CONFIGS = sorted(
    [p for p in EXAMPLES.glob("*.json") if "calibration" not in p.name]
    + list(EXAMPLES.glob("loops/*.json"))
    + list(EXAMPLES.glob("hf/*.json"))
    + list(EXAMPLES.glob("train/*.json"))
)


def canonical(name: str) -> dict:
    return smelt.read_config(EXAMPLES / name).to_dict()


def cpp(bad: dict) -> list[tuple[str, str, str]]:
    """smelt's violations for ``bad`` as config.json's "smelt" block (SmeltConfig's reader, fields smelt.*)."""
    with pytest.raises(smelt.ConfigError) as e:
        smelt.read_config({"model_type": "smelt", "smelt": bad}, source="config.json")
    return e.value.violations


def python(bad: dict) -> list[tuple[str, str, str]]:
    with pytest.raises(native.NativeConfigError) as e:
        native.read(bad, "smelt")
    return e.value.violations


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_example_reads_to_the_canonical_dict_smelt_gives(path):
    want = smelt.read_config(path).to_dict()
    assert native.read(copy.deepcopy(want), "smelt") == want
    assert json.dumps(native.read(copy.deepcopy(want), "smelt")) == json.dumps(want)  # key order too


def _set(d: dict, path: str, value) -> dict:
    """``d`` with the dotted key set to ``value`` (deleted by DELETE); a callable value is given the config and
    returns the key's value, or for the key "*" the whole config."""
    d = copy.deepcopy(d)
    if callable(value):
        value = value(copy.deepcopy(d))
        if path == "*":
            return value
    *parents, last = path.split(".")
    at = d
    for p in parents:
        at = at[p]
    if value is DELETE:
        del at[last]
    else:
        at[last] = value
    return d


DELETE = object()
TINY = "tiny-moe.json"  # dense layer 1, MoE 2-4, loop 2-3 twice
MLA = "deepseek-v3-mla.json"
LORA = "loops/relaxed-recursive-lora.json"
TWO = "loops/block-repeat-two-spans.json"

# (base, dotted key, value): each a config.json a user could write by hand.
BAD = [
    # the words the reference model branches on: the hostile file's pattern and kv_policy
    (TINY, "attention.pattern", ["__class__"]),
    (TINY, "loop.kv_policy", "exec"),
    (TINY, "attention.pattern", "full"),
    (TINY, "attention.pattern", [1, "sliding", None]),
    (TINY, "attention.pattern", []),
    (TINY, "attention.pattern", ["full"] * 5),
    (TINY, "attention.type", "flash"),
    (TINY, "attention.qk_norm", True),
    (TINY, "norm", "batchnorm"),
    (TINY, "norm_placement", "post"),
    (TINY, "ffn.type", "swiglu"),
    (TINY, "moe.router_score", "argmax"),
    # the routing choices: words, their forms' rules, the clamp's numbers (a type error not repeated by a rule)
    (TINY, "moe.router_form", "gpt"),
    (TINY, "moe.router_form", "llama4"),
    (TINY, "moe.router_form", "deepseek"),
    (TINY, "moe", lambda c: dict(c["moe"], router_score="sigmoid", router_form="plain")),
    (TINY, "moe", lambda c: dict(c["moe"], router_score="sigmoid", router_form="llama4", renormalize=True)),
    (TINY, "moe.renormalize", "no"),
    (TINY, "moe.clamped_swiglu", {"alpha": "a", "limit": -1}),
    (TINY, "moe.clamped_swiglu", {"alpha": 1.702}),
    (TINY, "moe.clamped_swiglu", {"alpha": -2, "limit": 0, "x": 1}),
    (TINY, "moe.clamped_swiglu", [1.702, 7.0]),
    (TINY, "*", lambda c: dict(c, ffn=dict(c["ffn"], type="plain"), moe=dict(c["moe"], clamped_swiglu={
        "alpha": 1.702, "limit": 7.0}))),
    (TINY, "loop.injection", "add"),
    # loops: counts, spans, their order
    (TINY, "loop.count", 1000000),
    (TINY, "loop.count", 0),
    (TINY, "loop.count", "2"),
    (TINY, "loop.count", 2.5),
    (TINY, "loop.span", "1-40"),
    (TINY, "loop.span", "3-2"),
    (TINY, "loop.span", "0-2"),
    (TINY, "loop.span", "-1-3"),
    (TINY, "loop.span", "a-b"),
    (TINY, "loop.span", ""),
    (TINY, "loop.span", 4),
    (TINY, "loop.span", "\u00e9" * 40),  # cut at a character boundary
    (TINY, "attention.pattern", {"z": 1, "a": ["s" * 100]}),  # keys sorted, cut at 60 bytes
    (TINY, "moe.layers", {"first_dense": 1, "evrey": 2}),  # a near miss named
    (TINY, "loop.span", DELETE),
    (TINY, "loop.residual_scale", -0.5),
    (TINY, "loop.residual_scale", 0),
    (TINY, "loop.backprop_passes", 3),
    (TINY, "loop.kv_keep", [0.5, 1.0]),
    (TINY, "loop.kv_policy", "active"),
    (TINY, "loop", {"span": "2-3", "count": 2, "kv_policy": "active", "kv_keep": [0, 1.5, "x"]}),
    (TINY, "loop.norm_each_pass", True),
    (TINY, "loop.exit_gate", True),
    (TINY, "loop", {"span": "4-4", "count": 2, "norm_each_pass": True, "norm_after": True}),
    (TINY, "loop.lora_rank", 4),
    (TINY, "loop.lora_targets", ["q", "q", "gate", "w"]),
    (TINY, "loop.extra", 1),
    (TINY, "loop.cuont", 3),
    (TINY, "loops", [{"span": "1-2", "count": 2}]),
    (TINY, "loop", [1]),
    (TWO, "loops", []),
    (TWO, "loops", [{"span": "3-6", "count": 2}, {"span": "5-9", "count": 3}, 7]),
    (TWO, "loops", {"span": "1-2"}),
    # sizes: the bounds that keep a model buildable
    (TINY, "num_layers", 100000),
    (TINY, "num_layers", 2**63),
    (TINY, "num_layers", True),
    (TINY, "num_layers", "4"),
    (TINY, "num_layers", 1),
    (TINY, "hidden_size", 65536 * 1024),
    (TINY, "vocab_size", 0),
    (TINY, "vocab_size", DELETE),
    (TINY, "context_length", 2**31),
    (TINY, "kv_cache_bytes", 65),
    (TINY, "mtp_modules", -1),
    (TINY, "attention.num_kv_heads", 3),
    (TINY, "attention.head_dim", 0),
    (TINY, "attention.window", 8),
    (TINY, "attention", lambda c: dict(c["attention"], qkv_bias=True, qk_bias=True)),
    (TINY, "attention", {"num_heads": 4, "num_kv_heads": 2, "head_dim": 16, "pattern": ["sliding", "chunked"]}),
    (TINY, "attention", "gqa"),
    (TINY, "attention", DELETE),
    (TINY, "moe.num_experts", 2**21),
    (TINY, "moe.top_k", 9),
    (TINY, "moe.shared_width", 0),
    (TINY, "moe.num_shared_experts", 0),
    (TINY, "moe.layers", [0, 2, 2, 9, "x"]),
    (TINY, "moe.layers", []),
    (TINY, "moe.layers", "all"),
    (TINY, "moe.layers", {"first_dense": 4, "every": 0, "phase": 3, "evry": 1}),
    (TINY, "moe.expert_width", DELETE),
    (TINY, "ffn.dense_width", 0),
    (TINY, "ffn", 5),
    (TINY, "schema_version", 2),
    (TINY, "schema_version", "1"),
    (TINY, "nmae", "x"),
    (TINY, "name", 5),
    (TINY, "tie_embeddings", "yes"),
    (MLA, "attention.kv_lora_rank", 0),
    (MLA, "attention", lambda c: dict(c["attention"], qk_nope_head_dim=0, qk_rope_head_dim=0)),
    (MLA, "attention.qk_norm", "full"),
    (MLA, "attention.qkv_bias", True),
    (MLA, "attention.head_dim", 64),
    (LORA, "loop.lora_rank", 100000),
    (LORA, "loop.lora_targets", []),
    (LORA, "loop", lambda c: dict(c["loop"], lora_targets=["q", "up", "o", "gate", "down"], lora_rank=600)),
    (LORA, "loop.lora_rank", 0),
    (LORA, "*", lambda c: dict(c, ffn=dict(c["ffn"], type="plain"), loop=dict(c["loop"], lora_targets=["gate"]))),
    (TINY, "loop", {"span": "2-3", "count": 2, "lora_rank": 4, "lora_targets": ["up"]}),
    (MLA, "loop", {"span": "1-2", "count": 2, "lora_rank": 4, "lora_targets": ["q", "down"]}),
]


@pytest.mark.parametrize("base, key, value", BAD, ids=[f"{i}:{b.split('/')[-1][:-5]}:{k}" for i, (b, k, _) in
                                                      enumerate(BAD)])
def test_a_bad_config_gets_the_violations_smelt_gives(base, key, value):
    bad = _set(canonical(base), key, value)
    want = cpp(bad)
    assert want  # smelt refuses it
    assert python(bad) == want


def test_the_hostile_checkpoint_edits_are_refused_by_name():
    """The edits a with_code checkpoint ran unchecked without smelt: words that are no layer kind or policy, a
    loop a million passes long, a span past the last layer, 100,000 layers."""
    base = canonical("train/tiny-baseline.json")
    cases = {
        "attention.pattern": (["__class__"], 'smelt.attention.pattern[0] = "__class__": must be one of full, '
                              "sliding, chunked"),
        "loop": ({"span": "1-4", "count": 2, "kv_policy": "exec"}, 'smelt.loop.kv_policy = "exec": must be one of '
                 "per_visit, shared, active"),
        "num_layers": (100000, "smelt.num_layers = 100000: must be at most 65536"),
    }
    for key, (value, message) in cases.items():
        with pytest.raises(native.NativeConfigError) as e:
            native.read(_set(base, key, value), "smelt")
        assert str(e.value).splitlines()[0] == message
    looped = dict(base, loop={"span": "1-4", "count": 1000000})
    with pytest.raises(native.NativeConfigError, match=r"^smelt\.loop\.count = 1000000: must be at most 1024$"):
        native.read(looped, "smelt")
    n = base["num_layers"]
    past = dict(base, loop={"span": f"1-{n + 1}", "count": 2})
    with pytest.raises(native.NativeConfigError, match=rf'^smelt\.loop\.span = "1-{n + 1}": must satisfy 1 <= '
                       rf"first <= last <= num_layers = {n}$"):
        native.read(past, "smelt")


def test_a_hundred_violations_are_listed_then_one_line_says_more():
    bad = _set(canonical(TINY), "attention.pattern", ["x"] * 150)
    got = python(bad)
    assert got == cpp(bad) and len(got) == 101
    assert got[-1] == ("", "", "(more violations after the first 100 are not listed)")
