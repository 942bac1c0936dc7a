"""`python -m smelt check-model` and smelt.torch.measure (docs/reference-model.md, "check-model").

The command's table for tiny-moe against numbers worked by hand, its --json and --markdown, every exit code
with its message, and the agreement of every example config the reference model builds: parameters, forward
FLOPs, training FLOPs and the KV cache, all exact. Skipped where torch is missing.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
import smelt.torch._measure as measure_module  # noqa: E402
from torch_support import ROOT, example, run_check  # noqa: E402

TINY = example("tiny-moe.json")


run = run_check


def test_tiny_moe_table_by_hand(capsys):
    # examples/tiny-moe.json at its context_length T = 8 (the default: 16, or less): V = 1000, H = 64,
    # 4 layers (layer 1 dense), span 2-3 twice: 6 visits, 5 of them MoE; 4 heads and 2 KV heads of 16
    # (q = 64, kv = 32), 8 experts of 32 (top-2), one shared of 32, dense width 128 (counting.md, section 10).
    code, out, err = run(capsys, TINY)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "check-model tiny-moe ('" + TINY + "'): context 8 tokens, seed 0, 4 layers stored, 6 executed"
    for line in (
        # 1000 * 64
        "params    embedding                             64,000     64,000  exact",
        # 4 * (64*(64 + 2*32) + 64*64) = 4 * 12,288: a looped layer's weights once
        "params    attention                             49,152     49,152  exact",
        # 6 visits * 2*64*(64 + 2*32)
        "forward   attention_qkv                         98,304     98,304  exact",
        # FlopCounterMode: Q K^T and softmax V over the full 8 x 8, 6 visits * 2 * 2*64*8
        "forward   attention_core (flop-counter)         12,288     12,288  exact",
        # the same on smelt's causal convention: * P / T^2 = 36/64, so 6 * 2 * 2*64*4.5
        "forward   attention_scores + values              6,912      6,912  exact",
        # 5 MoE visits * top-2 * 2*3*64*32
        "forward   experts                              122,880    122,880  exact",
        # smelt's forward (counting.md, section 10) + 12,288 - 6,912 = 526,336 (section 13.4)
        "forward   total (flop-counter)                 526,336    526,336  exact",
        "forward   total                                520,960    520,960  exact",
        # forward + backward: 3 * 526,336 measured, 3 * 520,960 after the same conversion
        "training  total (flop-counter, 3 x forward)  1,579,008  1,579,008  exact",
        "training  total                              1,562,880  1,562,880  exact",
        # 6 visits * (K, V) * 2 KV heads * 16 * 8 tokens * 2 bytes
        "kv        bytes_at_context                       6,144      6,144  exact",
    ):
        assert line in lines, line
    assert lines[-1] == "all 25 terms agree"


def test_json_fields(capsys):
    code, out, _ = run(capsys, TINY, "--json", "--context", "4", "--seed", "3")
    assert code == 0
    d = json.loads(out)
    assert list(d) == [
        "schema_version",
        "kind",
        "config",
        "shrunk",
        "model",
        "context",
        "seed",
        "layers_stored",
        "layers_executed",
        "rows",
        "agree",
    ]
    assert (d["kind"], d["config"], d["shrunk"], d["context"], d["seed"], d["agree"]) == (
        "check-model",
        TINY,
        False,
        4,
        3,
        True,
    )
    rows = {(r["part"], r["term"]): r for r in d["rows"]}
    assert list(rows["params", "total"]) == ["part", "term", "smelt", "measured", "exact"]
    # T = 4, all full: core 6 * 2 * 2*64*4 = 6,144 measured; causal * 10/16 = 3,840 = 6 * 2 * 2*64*2.5
    assert rows["forward", "attention_core (flop-counter)"]["measured"] == 6_144
    assert rows["forward", "attention_scores + values"]["measured"] == 3_840
    assert rows["kv", "bytes_at_context"]["measured"] == 6 * 2 * 2 * 16 * 4 * 2


def test_two_configs_give_an_array_and_shrink_is_recorded(capsys):
    code, out, _ = run(capsys, TINY, example("hf/llama-3.1-8b.json"), "--shrink", "--json", "--context", "4")
    d = json.loads(out)
    assert code == 0
    assert [(x["model"], x["shrunk"], x["agree"]) for x in d] == [("tiny-moe", True, True), ("llama", True, True)]


def test_a_term_that_disagrees_exits_3(capsys, monkeypatch):
    # A model with 5 weights smelt does not count (they fall to dense_ffn, and to the total): exit 3.
    build = measure_module.build_model

    def extra(*args, **kwargs):
        model = build(*args, **kwargs)
        model.extra = torch.nn.Parameter(torch.zeros(5))
        return model

    monkeypatch.setattr(measure_module, "build_model", extra)
    code, out, _ = run(capsys, TINY)
    assert code == 3
    lines = out.splitlines()
    assert "params    dense_ffn                             24,576     24,581  diff +5" in lines
    assert "params    total                                369,728    369,733  diff +5" in lines
    assert lines[-1] == "2 of 25 terms differ: params.dense_ffn, params.total"


BAD_INPUT = [
    (["--context", "0"], "--context = 0: must be at least 1"),
    (["--context", "9"], f"--context = 9: must be at most the config's context_length = 8 ('{TINY}')"),
    (["--seed", "-1"], "--seed = -1: must be between 0 and 9223372036854775807"),
    (["--json", "--markdown"], "--json and --markdown: choose one"),
]


@pytest.mark.parametrize("extra,message", BAD_INPUT)
def test_bad_options_exit_2(capsys, extra, message):
    assert run(capsys, TINY, *extra) == (2, "", f"smelt: error: {message}\n")


def test_a_bad_config_exits_2_with_smelt_s_message(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "name": "bad", "vocab_size": -3, "num_layers": 2, "hidden_size": 64, '
                   '"attention": {"num_heads": 4}}')
    code, out, err = run(capsys, TINY, str(bad))  # nothing runs, tiny-moe's table is not printed either
    assert (code, out) == (2, "")
    assert err == (
        f"smelt: error: while reading config '{bad}':\n"
        "  attention.num_kv_heads: missing (required)\n"
        "  attention.head_dim: missing (required)\n"
        "  vocab_size = -3: must be positive\n"
        "  ffn.dense_width = 0: must be positive, since some layers are dense\n"
    )


def test_a_config_too_large_without_shrink_exits_2(capsys):
    # Mixtral-8x7B: smelt counts 46,702,792,704 parameters; 4 bytes each = 174.0 GiB.
    path = example("mixtral-8x7b.json")
    assert run(capsys, path) == (
        2,
        "",
        f"smelt: error: '{path}' has 46,702,792,704 parameters, more than the 50,000,000 check-model builds at "
        "full size (about 174.0 GiB of float32 weights): add --shrink to check a tiny copy with the same ratios\n",
    )


def test_a_context_whose_scores_would_not_fit_exits_2(capsys, tmp_path):
    # tiny-moe with a long context: the reference model keeps 12 bytes per (head, query, key) and visit for
    # the backward, 12 * 4 heads * 4096^2 * 6 visits = 4,831,838,208 bytes = 4.5 GiB > 2 GiB.
    cfg = smelt.read_config(TINY).to_dict()
    cfg["context_length"] = 65536
    path = tmp_path / "long.json"
    path.write_text(json.dumps(cfg))
    assert run(capsys, str(path), "--context", "4096") == (
        2,
        "",
        "smelt: error: --context = 4096: the reference model keeps the full T x T attention scores of every "
        f"visit for the backward, about 4.5 GiB for '{path}', more than the 2 GiB check-model allows: use a "
        "smaller --context\n",
    )


def test_a_feature_not_built_exits_2_with_its_name(capsys, monkeypatch):
    # Whatever the model does not build raises NotImplementedError naming it; the command prints that text.
    def refuse(cfg, **kwargs):
        raise NotImplementedError('smelt.torch cannot build yet: attention.type = "mla" (Multi-head Latent Attention)')

    monkeypatch.setattr(st, "build_model", refuse)
    assert run(capsys, TINY) == (
        2,
        "",
        'smelt: error: smelt.torch cannot build yet: attention.type = "mla" (Multi-head Latent Attention)\n',
    )


def test_unreadable_files_exit_4(capsys, tmp_path):
    missing = str(tmp_path / "missing.json")
    assert run(capsys, missing) == (
        4,
        "",
        f"smelt: error: while reading config '{missing}': cannot open '{missing}': No such file or directory\n",
    )
    assert run(capsys, str(tmp_path)) == (
        4,
        "",
        f"smelt: error: while reading config '{tmp_path}': cannot read '{tmp_path}': Is a directory\n",
    )


def test_without_torch_exits_2_and_the_module_runs_as_a_program():
    # `python -m smelt` with torch hidden: the command says what it needs. It also shows that `-m smelt`
    # maps the command's errors to exit 2 (the module runs as __main__ there).
    hide = "import sys; sys.modules['torch'] = None; import runpy; runpy.run_module('smelt', run_name='__main__')"
    done = subprocess.run(
        [sys.executable, "-c", hide, "check-model", TINY], capture_output=True, text=True, cwd=ROOT
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "smelt: error: check-model needs torch (pip install torch==2.5.1; docs/reference-model.md): "
        "import of torch halted; None in sys.modules\n"
    )


# Every example config, native and Hugging Face; those the model does not build yet are skipped by name.
EXAMPLES = sorted(
    os.path.relpath(p, example("")) for p in glob.glob(example("*.json")) + glob.glob(example("hf/*.json"))
)


def cut(cfg: dict, layers: int = 4) -> dict:
    """At most `layers` layers for the FLOP and KV part, to keep the suite fast: the first ones (the attention
    pattern, of length 1, 2 or 4, and the dense-first layers are kept, since they come first), and a loop
    becomes span 2-3 with its count and residual scale (1 to `layers` for a span with per-pass extras, which
    must end at the last layer). Parameters are checked on the whole shrunk config."""
    c = json.loads(json.dumps(cfg))
    if c["num_layers"] <= layers:
        return c
    c["num_layers"] = layers
    if c.get("loop"):  # a span through the last layer (Ouro's whole stack) still ends there
        ends = c["loop"].get("exit_gate") or c["loop"].get("norm_each_pass")
        c["loop"]["span"] = f"1-{layers}" if ends else "2-3"
    sel = (c.get("moe") or {}).get("layers")
    if isinstance(sel, list):
        c["moe"]["layers"] = [i for i in sel if i <= layers]
    return smelt.read_config(c).to_dict()


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_agrees_term_by_term(name):
    cfg = st.shrink(example(name))
    # T = 12: above the shrunk windows and chunks (at most 8), and not a power of two, so the causal
    # conversion P / T^2 is a fraction that must still come out as smelt's integer per sequence. The
    # parameters of the whole shrunk configs are test_torch_params.py's (building 30 layers of 336 experts
    # takes 10 s even on the meta device); here those of the cut config, with the rest.
    try:
        rows = st.measure(cut(cfg), context=12).rows
    except NotImplementedError as e:  # test_torch_params.py holds the list of what is not built yet
        pytest.skip(str(e))
    assert [r for r in rows if not r.exact] == []
    terms = {(r.part, r.term) for r in rows}
    # 9 params, 12 forward, 2 training, 2 kv rows; with MTP modules params.mtp and forward.mtp, and no
    # flop-counter training row (that convention has no MTP); with a span's extras (Ouro's exit gate,
    # Huginn's adapter) params.loop_extras and forward.loop_extras.
    extras = 2 if smelt.count(cfg).to_dict()["params"]["terms"]["loop_extras"] else 0
    truncated = 1 if (cfg.get("loop") or {}).get("backprop_passes") else 0  # Huginn: no flop-counter training row
    assert len(terms) == len(rows) == (26 if cfg.get("mtp_modules", 0) else 25) + extras - truncated
    if cfg.get("mtp_modules", 0):
        assert {("params", "mtp"), ("forward", "mtp")} <= terms


def test_mtp_rows_by_hand():
    # tiny-moe with 2 MTP modules at T = 8 (counting.md, section 3.5); each module's layer is shaped like the
    # last layer (MoE), with full attention. Skipped where the model does not build MTP.
    cfg = st.shrink(TINY)
    cfg["mtp_modules"] = 2
    try:
        m = st.measure(smelt.read_config(cfg).to_dict(), context=8)
    except NotImplementedError as e:
        pytest.skip(str(e))
    rows = {(r.part, r.term): r for r in m.rows}
    assert all(r.exact for r in m.rows)
    # per module: M 2*64*64 = 8,192 + 3*64 norms + the layer: attention 12,288, norms 128, router 512,
    # experts 8*3*64*32 = 49,152, shared 6,144; 76,608 each
    assert rows["params", "mtp"].measured == 2 * 76_608
    # per module per token: M 2*2*64*64 = 16,384; the layer 16,384 + 8,192 + 2*2*64*4.5 (causal, 1,152)
    # + router 1,024 + top-2 experts 24,576 + shared 12,288 = 63,616; the head again 2*64*1000 = 128,000
    assert rows["forward", "mtp"].measured == 2 * (16_384 + 63_616 + 128_000)
    # training = 3 x (forward + mtp): 3 * (520,960 + 416,000); no flop-counter row (no MTP in that convention)
    assert rows["training", "total"].measured == 2_810_880
    assert ("training", "total (flop-counter, 3 x forward)") not in rows


def test_markdown_tables(capsys):
    code, out, _ = run(capsys, TINY, "--markdown", "--context", "8")
    assert code == 0
    lines = out.splitlines()
    assert lines[2] == (
        "| config | embedding | lm_head | attention | norms | router | experts | shared_experts | dense_ffn | total "
        "| all terms |"
    )
    assert lines[4] == (
        "| `tiny-moe.json` | 64,000 | 64,000 | 49,152 | 576 | 1,536 | 147,456 | 18,432 | 24,576 | 369,728 | exact |"
    )
    # T 8, visits 6; qkv, out, core T x T, core causal, router, experts, shared, dense, head, forward, training,
    # slots, KV bytes: the rows of test_tiny_moe_table_by_hand
    assert lines[-1] == (
        "| `tiny-moe.json` | 8 | 6 | 98,304 | 49,152 | 12,288 | 6,912 | 5,120 | 122,880 | 61,440 | 49,152 | 128,000 "
        "| 520,960 | 1,562,880 | 6 | 6,144 |"
    )


def test_markdown_marks_a_difference_and_lists_what_is_not_built(capsys, monkeypatch):
    # tiny-moe with 5 uncounted weights (bold, smelt's value beside it; exit 3), and a config whose feature
    # the model refuses: a line under the tables, not an error, so the docs' table lists every example.
    build, refuse_build = measure_module.build_model, st.build_model

    def extra(*args, **kwargs):
        model = build(*args, **kwargs)
        model.extra = torch.nn.Parameter(torch.zeros(5))
        return model

    def refuse(cfg, **kwargs):
        if cfg["name"] == "llama":
            raise NotImplementedError("smelt.torch cannot build yet: X")
        return refuse_build(cfg, **kwargs)

    monkeypatch.setattr(measure_module, "build_model", extra)
    monkeypatch.setattr(st, "build_model", refuse)
    code, out, _ = run(capsys, TINY, example("hf/llama-3.1-8b.json"), "--shrink", "--markdown")
    lines = out.splitlines()
    assert code == 3
    assert lines[4] == (
        "| `tiny-moe.json` | 64,000 | 64,000 | 49,152 | 576 | 1,536 | 147,456 | 18,432 | **24,581** (smelt 24,576) "
        "| **369,733** (smelt 369,728) | 2 of 25 differ |"
    )
    assert lines[-1] == "- `hf/llama-3.1-8b.json`: smelt.torch cannot build yet: X"


def test_the_docs_table_is_the_generated_one(capsys):
    # docs/reference-model.md, "Measured agreement", is scripts/agreement-table.sh's output (check-model
    # --shrink --markdown over every example, about 70 s); tiny-moe's rows, regenerated here, are in it as printed.
    code, out, _ = run(capsys, TINY, "--shrink", "--markdown")
    with open(os.path.join(ROOT, "docs", "reference-model.md"), encoding="utf-8") as f:
        doc = f.read().splitlines()
    rows = [line for line in out.splitlines() if line.startswith("| `tiny-moe.json`")]
    assert code == 0 and len(rows) == 2
    # The doc's tables have an mtp column (DeepSeek-V3 has a module); tiny-moe's cell there is empty.
    doc = [line.replace(" |  |", " |") for line in doc]
    for row in rows:
        assert row in doc
