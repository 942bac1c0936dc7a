"""The library's exceptions as Python's, with the library's messages: no exit, no printing."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

import smelt
from conftest import EXAMPLES, ROOT

TINY = json.loads((EXAMPLES / "tiny-moe.json").read_text())


def broken() -> dict:
    d = copy.deepcopy(TINY)
    d["attention"]["num_heads"] = "16"
    d["hidden_size"] = -1
    return d


def test_a_dict_with_a_wrong_type_gets_the_file_s_path_and_rule(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken()))
    with pytest.raises(smelt.ConfigError) as from_dict:
        smelt.read_config(broken())
    with pytest.raises(smelt.ConfigError) as from_file:
        smelt.read_config(path)
    rules = ['attention.num_heads = "16": must be an integer', "hidden_size = -1: must be positive"]
    assert str(from_dict.value).splitlines() == rules
    # The file's message is the same lines under the file's name.
    assert str(from_file.value).splitlines() == [f"while reading config '{path}':"] + ["  " + r for r in rules]
    assert from_dict.value.violations == [
        ("attention.num_heads", '"16"', "must be an integer"),
        ("hidden_size", "-1", "must be positive"),
    ]


def test_a_hugging_face_dict_is_read_as_the_cli_detects_it() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.read_config({"model_type": "qwen3_moe", "hidden_size": "a"})
    assert 'hidden_size = "a": must be an integer' in str(e.value).splitlines()
    assert "qwen3_moe" in smelt.supported_hf_model_types()


def test_a_missing_file_is_an_io_error_and_an_oserror() -> None:
    with pytest.raises(smelt.IOError) as e:
        smelt.read_config(ROOT / "no-such-config.json")
    path = ROOT / "no-such-config.json"
    assert str(e.value) == f"while reading config '{path}': cannot open '{path}': No such file or directory"
    assert isinstance(e.value, OSError) and isinstance(e.value, smelt.Error)
    assert smelt.SmeltIOError is smelt.IOError


def test_count_options_are_checked_with_the_library_s_words() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.count(TINY, context=0)
    assert str(e.value) == "context_length = 0: must be between 1 and 1073741824 tokens"
    with pytest.raises(smelt.ConfigError) as e:
        smelt.count(TINY, convention="megatro")
    assert str(e.value) == 'convention = "megatro": must be one of smelt, megatron, torchtitan, flop-counter'


def test_a_fit_no_law_describes_is_infeasible() -> None:
    # Losses alternating between 1e300 and 1e-300 pull A past the largest double.
    with pytest.raises(smelt.InfeasibleError) as e:
        smelt.fit(ROOT / "tests" / "data" / "runs-nonfinite.csv")
    assert str(e.value) == (
        "6 runs: the best fit of the chinchilla law has A = inf: parameters must be finite numbers "
        "(the runs pull the law to infinity; no chinchilla law describes them)"
    )


def test_fit_options_name_their_struct() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(EXAMPLES / "runs-dense-looped.csv", bootstrap=100001, threads=1025)
    assert str(e.value).splitlines() == [
        "FitOptions::bootstrap = 100001: must be between 0 and 100000",
        "FitOptions::threads = 1025: must be between 0 (all cores) and 1024",
    ]


def test_errors_share_one_root() -> None:
    for kind in (smelt.ConfigError, smelt.InfeasibleError, smelt.IOError, smelt.CudaError):
        assert issubclass(kind, smelt.Error)
    assert issubclass(smelt.ConfigError, ValueError)


def test_nothing_is_printed(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(smelt.ConfigError):
        smelt.derive(TINY, align_hidden=0)
    smelt.derive(EXAMPLES / "hf" / "qwen3-30b-a3b.json")  # outside the tolerance: the CLI writes to stderr
    assert capfd.readouterr() == ("", "")


def test_numpy_scalars_are_numbers_and_unencodable_values_are_named() -> None:
    np = pytest.importorskip("numpy")
    base = EXAMPLES / "smelt-baseline-12l.json"
    r = smelt.derive(base, hidden=(np.int64(512), np.int64(768)), loops=np.int32(2), tolerance_pct=np.float64(2))
    assert r.recipe.tolerance_pct == 2.0 and 512 <= r.best.knobs.hidden_size <= 768
    with pytest.raises(smelt.ConfigError) as e:
        smelt.derive(base, tolerance_pct=float("nan"))
    assert str(e.value) == "derive(): tolerance_pct = nan: must be finite"
    with pytest.raises(smelt.ConfigError) as e:
        smelt.derive(base, hidden={1, 2})
    assert str(e.value) == "derive(): hidden = {1, 2}: must be a number, string, list or bool"


def test_a_numpy_bool_is_refused_as_true_is_never_read_as_one() -> None:
    np = pytest.importorskip("numpy")
    for flag in (True, np.True_):
        with pytest.raises(smelt.ConfigError) as e:
            smelt.time(TINY, "h100", imbalance=flag)
        assert str(e.value) == "TimeOptions::imbalance = true: must be a number"
        with pytest.raises(smelt.ConfigError) as e:
            smelt.memory(TINY, tp=flag)
        assert str(e.value) == "MemoryLayout::tp = true: must be an integer"
        with pytest.raises(smelt.ConfigError) as e:
            smelt.derive(TINY, loops=[2, flag])
        assert str(e.value) == "LoopRecipe::loops = [2,true]: must be an integer"
    # numpy's bool is a flag where a flag is wanted
    assert smelt.memory(TINY, sequence_parallel=np.True_, tp=2).layout.sequence_parallel is True


def test_count_reads_none_as_the_default_and_names_a_wrong_type() -> None:
    np = pytest.importorskip("numpy")
    assert smelt.count(TINY, convention=None).to_json() == smelt.count(TINY).to_json()
    assert smelt.count(TINY, context=None).to_json() == smelt.count(TINY).to_json()
    assert smelt.count(TINY, context=np.int64(8)).to_json() == smelt.count(TINY, context=8).to_json()
    assert smelt.count(TINY, elementwise=np.True_).to_json() == smelt.count(TINY, elementwise=True).to_json()
    bad = [
        ({"convention": 5}, "count(): convention = 5: must be a string"),
        ({"context": True}, "count(): context = True: must be an integer"),
        ({"context": np.True_}, "count(): context = True: must be an integer"),
        ({"context": 8.0}, "count(): context = 8.0: must be an integer"),
        ({"elementwise": "yes"}, "count(): elementwise = 'yes': must be True or False"),
        ({"every_layer": 1}, "count(): every_layer = 1: must be True or False"),
    ]
    for kwargs, message in bad:
        with pytest.raises(smelt.ConfigError) as e:
            smelt.count(TINY, **kwargs)
        assert str(e.value) == message, kwargs


def test_a_hostile_dict_is_refused_not_crashed() -> None:
    deep: dict = {}
    node = deep
    for _ in range(100000):  # 100k levels: Python's encoder stops first
        node["a"] = {}
        node = node["a"]
    with pytest.raises(smelt.ConfigError, match=r"^<dict>: not a JSON object: maximum recursion depth"):
        smelt.read_config(deep)
    shallow: dict = {}
    node = shallow
    for _ in range(300):  # 300 levels reach the C++ reader, which bounds nesting at 64
        node["a"] = {}
        node = node["a"]
    with pytest.raises(smelt.ConfigError) as e:
        smelt.read_config(shallow)
    # Column 385: the 65th '{' of '{"a": {"a": ...' (6 characters a level, 1-based).
    assert str(e.value) == "<dict>:1:385: JSON nested deeper than 64 levels (the limit on input)"


def test_a_message_echoing_bytes_that_are_not_utf8_is_still_a_config_error(tmp_path: pathlib.Path) -> None:
    # The C++ message quotes the file's bytes; Python shows the undecodable ones as U+FFFD.
    path = tmp_path / "bad-utf8.json"
    path.write_bytes(b'{"schema_version": 1, "name": "a\xff\xfeb"}')
    with pytest.raises(smelt.ConfigError) as e:
        smelt.read_config(path)
    assert str(e.value).endswith("invalid string: ill-formed UTF-8 byte; last read: '\"a\ufffd'")
    assert e.value.violations[-1][2].endswith("last read: '\"a\ufffd'")
