"""A layer's anatomy (smelt.layer_anatomy, docs/anatomy.md) against the reference model's own modules.

For every example config the reference model builds (on the meta device: no memory), each kind of stored layer
(its first MoE layer and its first dense one) holds exactly the tensors the anatomy lists, in the same order,
each with the same number of elements, as many instances (experts) and the same requires_grad. Skipped where
torch is missing.
"""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from test_torch_params import BUILT  # noqa: E402
from torch_support import example  # noqa: E402


def torch_tensors(block: torch.nn.Module) -> list[tuple[str, int, int, bool]]:
    """(name with experts' indices as *, elements of one, instances, trainable), in registration order."""
    out: dict[str, list] = {}
    for name, p in block.named_parameters():
        key = re.sub(r"\.(experts|shared)\.\d+\.", r".\1.*.", name)
        if key in out:
            assert out[key][0] == p.numel() and out[key][2] == p.requires_grad, name
            out[key][1] += 1
        else:
            out[key] = [p.numel(), 1, p.requires_grad]
    return [(k, v[0], v[1], v[2]) for k, v in out.items()]


def smelt_tensors(cfg: dict, layer: int) -> list[tuple[str, int, int, bool]]:
    """The anatomy's tensors of 0-based stored layer `layer` (smelt numbers them from 1)."""
    a = smelt.layer_anatomy(cfg, layer + 1)
    return [(t["name"], t["elements"], t["instances"], t["trainable"]) for t in a["tensors"]]


def layer_kinds(cfg: dict) -> list[int]:
    """The first MoE layer and the first dense one (those the config has), as the anatomy says."""
    first: dict[bool, int] = {}
    for i in range(cfg["num_layers"]):
        first.setdefault(smelt.layer_anatomy(cfg, i + 1)["moe"], i)
        if len(first) == 2:
            break
    return sorted(first.values())


@pytest.mark.parametrize("name", BUILT)
def test_each_layer_kind_holds_the_tensors_the_anatomy_lists(name: str):
    cfg = smelt.read_config(example(name)).to_dict()
    kinds = layer_kinds(cfg)
    # The model up to the last of those layers (no loop, no MTP modules: neither changes a layer's modules), so
    # that DeepSeek-V3's 61 layers of 256 experts are not all built.
    short = {k: v for k, v in cfg.items() if k not in ("loop", "loops")}
    short.update(num_layers=max(kinds[-1] + 1, len(cfg["attention"]["pattern"])), mtp_modules=0)
    model = st.build_model(short, device="meta")
    for i in kinds:
        assert torch_tensors(model.layers[i]) == smelt_tensors(cfg, i), f"{name}, layer {i}"
        assert smelt.layer_anatomy(short, i + 1)["moe"] == smelt.layer_anatomy(cfg, i + 1)["moe"]


def test_the_anatomy_of_a_small_moe_layer_by_hand():
    # tiny-moe.json: H = 64, 4 query heads and 2 KV heads of 16, 8 SwiGLU experts of 32, top-2, one shared
    # expert of 32, RMSNorm, no biases; layer 1 dense (first_dense = 1), layer 2 MoE.
    cfg = smelt.read_config(example("tiny-moe.json")).to_dict()
    a, m = cfg["attention"], cfg["moe"]
    assert (cfg["hidden_size"], a["num_heads"], a["num_kv_heads"], a["head_dim"]) == (64, 4, 2, 16)
    assert (m["num_experts"], m["top_k"], m["expert_width"], m["num_shared_experts"], m["shared_width"]) == (
        8, 2, 32, 1, 32)
    got = smelt.layer_anatomy(cfg, 2)
    assert (got["layer"], got["moe"]) == (2, True)
    assert [(t["name"], t["term"], t["elements"], t["instances"]) for t in got["tensors"]] == [
        ("attn_norm.weight", "norms", 64, 1),
        ("attn.q_proj.weight", "attention", 64 * 4 * 16, 1),  # 4,096
        ("attn.k_proj.weight", "attention", 64 * 2 * 16, 1),  # 2,048
        ("attn.v_proj.weight", "attention", 64 * 2 * 16, 1),
        ("attn.o_proj.weight", "attention", 4 * 16 * 64, 1),
        ("ffn_norm.weight", "norms", 64, 1),
        ("ffn.router.weight", "router", 64 * 8, 1),
        ("ffn.experts.*.gate_proj.weight", "experts", 64 * 32, 8),
        ("ffn.experts.*.up_proj.weight", "experts", 64 * 32, 8),
        ("ffn.experts.*.down_proj.weight", "experts", 32 * 64, 8),
        ("ffn.shared.*.gate_proj.weight", "shared_experts", 64 * 32, 1),
        ("ffn.shared.*.up_proj.weight", "shared_experts", 64 * 32, 1),
        ("ffn.shared.*.down_proj.weight", "shared_experts", 32 * 64, 1),
    ]
    # Q, K, V fused: n = 4 x 16 + 2 x 2 x 16 = 128; gate and up fused: n = 2 x 32, the experts top-2 a token.
    assert got["products"] == [
        {"op": "attention_qkv", "n": 128, "k": 64, "times": 1},
        {"op": "attention_out", "n": 64, "k": 64, "times": 1},
        {"op": "router", "n": 8, "k": 64, "times": 1},
        {"op": "experts", "n": 64, "k": 64, "times": 2},
        {"op": "experts", "n": 64, "k": 32, "times": 2},
        {"op": "shared_experts", "n": 64, "k": 64, "times": 1},
        {"op": "shared_experts", "n": 64, "k": 32, "times": 1},
    ]
    assert (got["qk_width"], got["v_width"], got["kv_elements"]) == (64, 64, 2 * 2 * 16)
    # The count's terms are these sums: attention 4,096 + 2 x 2,048 + 4,096 = 12,288; experts 8 x 3 x 2,048.
    layer = smelt.count(cfg, every_layer=True).to_dict()["layers"][1]
    assert layer["params"]["attention"] == 12_288
    assert layer["params"]["experts"] == 49_152
    # FLOPs per visit: 2 x the products' n x k x times; the experts 2 x 2 x (64 x 64 + 64 x 32) = 24,576.
    assert layer["flops_per_visit"]["experts"] == 24_576
    assert smelt.layer_anatomy(cfg, 1)["moe"] is False


def test_a_layer_that_is_not_stored_is_refused():
    cfg = smelt.read_config(example("tiny-moe.json")).to_dict()
    with pytest.raises(smelt.ConfigError, match=r"^layer = 5: must be a stored layer, 1 to 4$"):
        smelt.layer_anatomy(cfg, cfg["num_layers"] + 1)
    with pytest.raises(smelt.ConfigError, match=r"^layer = 0: must be a stored layer, 1 to 4$"):
        smelt.layer_anatomy(cfg, 0)
    with pytest.raises(smelt.ConfigError, match=r"^layer_anatomy\(\): layer = True: must be an integer$"):
        smelt.layer_anatomy(cfg, True)
