"""smelt.hf's transformers class (docs/training.md): the reference model behind PreTrainedModel, checked against
smelt.torch's model and transformers' own classes after save_pretrained / from_pretrained, generate() from the
per-visit cache against greedy full forwards, and the counts. Skipped without torch and transformers."""

from __future__ import annotations

import json
import os

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
if not transformers.utils.is_torch_available():
    pytest.skip(f"transformers {transformers.__version__} cannot use torch {torch.__version__}",
                allow_module_level=True)

import smelt  # noqa: E402
import smelt.hf as sh  # noqa: E402
import smelt.torch as st  # noqa: E402
from test_torch_decode import CASES as DECODE  # noqa: E402
from test_torch_hf import CASES as FAMILIES, Float64, _randomise  # noqa: E402
from torch_support import derived_looped, example  # noqa: E402

ATOL = 1e-10
# Equal weights give equal float64 logits only up to rounding: a tensor loaded back, or computed in another process
# or with another thread count, sits at another address, and the BLAS (MKL on x86) may take another kernel for
# another alignment or split, summing in another order (4.4e-16 seen on an AVX2 EPYC). 1e-12 is thousands of
# times such a reordering (about depth x 1e-16 here) and far below any real difference in the model.
ROUNDING = 1e-12
sh.register()
Auto = transformers.AutoModelForCausalLM

NATIVE = {
    "derived-looped": derived_looped,  # span 4-9 twice, scale 1/2: the SMELT recipe
    "two-spans": lambda: st.shrink(example("loops/block-repeat-two-spans.json")),
    "ouro": lambda: st.shrink(example("hf/ouro-1.4b.json")),  # sandwich norms, exit gates, the whole stack x4
    "huginn": lambda: st.shrink(example("hf/huginn-0125.json")),  # adapter, norm_after, truncated backprop
    "deepseek-mla": lambda: few_layers_and_experts(st.shrink(example("deepseek-v3-mla.json"))),  # MLA, MTP, no sinks
    **DECODE,  # a looped MoE, chunked + sliding + full, gpt-oss's sinks, MLA with every switch
}


def few_layers_and_experts(cfg: dict) -> dict:
    """The shrunk DeepSeek-V3 with 5 layers (3 dense, 2 MoE) of 16 experts: every kind of tensor the 61 layers of
    256 hold, in a checkpoint of 11 MB rather than 1.35 GB of float64."""
    cfg["num_layers"] = 5
    cfg["moe"]["num_experts"] = 16
    return smelt.read_config(cfg).to_dict()


def tokens(vocab: int, b: int = 2, t: int = 12, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, vocab, (b, t), generator=torch.Generator().manual_seed(seed))


def model_of(native: dict, **config) -> sh.SmeltForCausalLM:
    return Auto.from_config(sh.SmeltConfig(smelt=native, **config), dtype=torch.float64).eval()


@pytest.mark.parametrize("name", sorted(NATIVE))
def test_same_logits_as_the_reference_model_and_after_a_round_trip(name, tmp_path):
    native = NATIVE[name]()
    model = model_of(native, init_seed=3)
    ref = st.build_model(native, seed=3).double().eval()
    x = tokens(native["vocab_size"])
    with torch.no_grad():
        want, got = ref(x).logits, model(x).logits
    assert want.abs().max() > 0.01  # far from zero, so the comparison means something
    assert (got - want).abs().max().item() < ATOL
    model.save_pretrained(tmp_path)
    back = Auto.from_pretrained(tmp_path, dtype=torch.float64).eval()
    assert type(back) is sh.SmeltForCausalLM and back.config.smelt == model.config.smelt
    # safetensors gives the weights back bit for bit; the logits only to rounding (ROUNDING below)
    loaded, weights = back.state_dict(), model.state_dict()
    assert list(loaded) == list(weights) and all(torch.equal(loaded[k], w) for k, w in weights.items())
    with torch.no_grad():
        torch.testing.assert_close(back(x).logits, got, rtol=ROUNDING, atol=ROUNDING)
    # The parameters stored are smelt's count, to the integer: params.total, and the MTP modules' params.mtp,
    # which smelt reports outside the total (docs/counting.md, section 6).
    p = smelt.count(native).to_dict()["params"]
    assert model.num_parameters() == p["total"] + p["mtp"]


@pytest.mark.parametrize("case", sorted(FAMILIES))
def test_a_family_checkpoint_runs_as_transformers_own_class(case, tmp_path):
    cls, kwargs = FAMILIES[case]
    cfg = getattr(transformers, cls)(**kwargs)
    hf = Auto.from_config(cfg, attn_implementation="eager", experts_implementation="eager").double().eval()
    _randomise(hf, seed=0)
    hf.save_pretrained(tmp_path / "family")
    ours = sh.SmeltForCausalLM.from_family(tmp_path / "family").double()
    ours.save_pretrained(tmp_path / "smelt")
    back = Auto.from_pretrained(tmp_path / "smelt", dtype=torch.float64).eval()
    x = tokens(128)
    with torch.no_grad():
        with Float64():
            want = hf(input_ids=x).logits
        got = back(x).logits
    assert want.abs().max() > 0.1
    assert (got - want).abs().max().item() < ATOL, case


def greedy_by_full_forwards(ref, prompt: torch.Tensor, n: int) -> torch.Tensor:
    seq = prompt
    for _ in range(n):
        seq = torch.cat([seq, ref(seq).logits[:, -1:].argmax(-1)], dim=1)
    return seq


@pytest.mark.parametrize("name", sorted(DECODE) + ["derived-looped", "ouro"])
def test_generate_from_the_per_visit_cache_equals_greedy_full_forwards(name):
    native = NATIVE[name]()
    model = model_of(native)
    ref = st.build_model(native, seed=0).double().eval()
    prompt = tokens(native["vocab_size"], t=5)
    n = 9  # past every shrunk window (W = 5, 8) and chunk (C = 4)
    with torch.no_grad():
        want = greedy_by_full_forwards(ref, prompt, n)
        got = model.generate(prompt, max_new_tokens=n, do_sample=False, min_new_tokens=n)
        out = model(prompt, use_cache=True)
    assert torch.equal(got, want)
    cache = out.past_key_values
    assert type(cache) is sh.SmeltCache and cache.get_seq_length() == 5
    assert len(cache) == len(set(ref.slot_of))  # one slot per attention visit (a looped layer: one per pass)


def test_eager_and_sdpa_give_the_same_logits():
    from unittest import mock

    fused = torch.nn.functional.scaled_dot_product_attention
    for name in ("derived-looped", "deepseek-mla", "mixed", "gpt-oss-20b"):
        native = NATIVE[name]()
        x = tokens(native["vocab_size"])
        logits, calls = {}, {}
        for impl in ("eager", "sdpa"):
            cfg = sh.SmeltConfig(smelt=native)
            m = Auto.from_config(cfg, attn_implementation=impl, dtype=torch.float64).eval()
            assert m.config._attn_implementation == impl
            with torch.no_grad(), mock.patch("torch.nn.functional.scaled_dot_product_attention", wraps=fused) as spy:
                logits[impl] = m(x).logits
            calls[impl] = spy.call_count
        assert (logits["eager"] - logits["sdpa"]).abs().max().item() < ATOL, name
        # sdpa runs torch's fused kernel once per attention visit without sinks (gpt-oss's keep the explicit form)
        plain = sum(1 for i, _ in m.model.schedule if m.model.layers[i].attn.sinks is None)
        assert calls == {"eager": 0, "sdpa": plain}, name
        assert plain > 0 or name == "gpt-oss-20b"


def test_save_writes_the_bytes_of_export_family_smelt(tmp_path):
    import subprocess

    from conftest import cli_path

    path = example("smelt-looped-12l.json")
    written = sh.save(path, tmp_path)
    cli = subprocess.run([str(cli_path()), "export", path, "--to", "hf", "--family", "smelt"], capture_output=True,
                         text=True, check=True).stdout
    assert open(written, encoding="utf-8").read() == cli
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]
    # Read back by transformers through the registered class: the native config, loop included.
    cfg = transformers.AutoConfig.from_pretrained(tmp_path)
    assert type(cfg) is sh.SmeltConfig and cfg.smelt["loop"] == {"span": "4-9", "count": 2, "residual_scale": 0.5}
    assert (cfg.hidden_size, cfg.num_hidden_layers) == (1056, 12)


def _loaded_without_smelt(tmp_path, model, native) -> list[str]:
    """A fresh interpreter in which ``import smelt`` fails loads the checkpoint in ``tmp_path`` with
    trust_remote_code: its module and class, whether its weights equal the saved ones bit for bit, and whether its
    logits equal ``model``'s to rounding (ROUNDING: that process runs with its own thread count and allocations)."""
    import subprocess
    import sys

    x = tokens(native["vocab_size"])
    with torch.no_grad():
        want = model(x).logits
    torch.save({"x": x, "logits": want}, tmp_path / "want.pt")
    code = (
        "import sys; sys.modules['smelt'] = None\n"  # any import of smelt raises ImportError
        "import torch, transformers\n"
        f"m = transformers.AutoModelForCausalLM.from_pretrained({str(tmp_path)!r}, trust_remote_code=True,"
        " dtype=torch.float64).eval()\n"
        f"w = torch.load({str(tmp_path / 'want.pt')!r}, weights_only=True)\n"
        "with torch.no_grad(): got = m(w['x']).logits\n"
        "from safetensors.torch import load_file\n"  # the weights as saved: the model's, bit for bit
        f"saved = load_file({str(tmp_path / 'model.safetensors')!r})\n"
        "s = m.state_dict()\n"
        "same = sorted(s) == sorted(saved) and all(torch.equal(s[k], v) for k, v in saved.items())\n"
        f"close = torch.allclose(got, w['logits'], rtol={ROUNDING!r}, atol={ROUNDING!r})\n"
        "print(type(m).__module__.rsplit('.', 1)[-1], type(m).__name__, same, close)\n"
    )
    env = dict(os.environ, HF_MODULES_CACHE=str(tmp_path / "modules"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


def test_with_code_a_checkpoint_runs_without_smelt(tmp_path):
    """save(..., with_code=True) beside save_pretrained's weights: loaded where smelt is not installed, the same
    weights bit for bit, the same logits to rounding."""
    native = NATIVE["derived-looped"]()
    model = model_of(native)
    model.save_pretrained(tmp_path)
    sh.save(native, tmp_path, with_code=True)
    assert _loaded_without_smelt(tmp_path, model, native) == ["modeling_smelt", "SmeltForCausalLM", "True", "True"]
    config = (tmp_path / "config.json").read_text()
    assert '"auto_map": {\n    "AutoConfig": "configuration_smelt.SmeltConfig",' in config


def test_transformers_own_code_shipping_copies_the_package_as_it_is(tmp_path):
    """register_for_auto_class, then save_pretrained: transformers' custom_object_save copies modeling_smelt.py,
    configuration_smelt.py and every module they import relatively, byte for byte (no file renamed or rewritten:
    the package is laid out as transformers ships a model's code), writes the auto_map itself, and the checkpoint
    loads where smelt is not installed."""
    import smelt.reference as package

    native = NATIVE["derived-looped"]()
    model = model_of(native)
    try:
        sh.SmeltForCausalLM.register_for_auto_class("AutoModelForCausalLM")
        sh.SmeltConfig.register_for_auto_class()
        model.save_pretrained(tmp_path)
    finally:
        sh.SmeltForCausalLM._auto_class = None
        sh.SmeltConfig._auto_class = None
    folder = os.path.dirname(package.__file__)
    shipped = sorted(p.name for p in tmp_path.glob("*.py"))
    assert shipped == sorted(f for f in os.listdir(folder) if f.endswith(".py") and f != "__init__.py")
    assert all((tmp_path / f).read_bytes() == open(os.path.join(folder, f), "rb").read() for f in shipped)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["auto_map"] == {"AutoConfig": "configuration_smelt.SmeltConfig",
                                  "AutoModelForCausalLM": "modeling_smelt.SmeltForCausalLM"}
    assert _loaded_without_smelt(tmp_path, model, native) == ["modeling_smelt", "SmeltForCausalLM", "True", "True"]
