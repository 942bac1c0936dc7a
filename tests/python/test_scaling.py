"""smelt.fit and smelt.frontier against the CLI's JSON, from a path, rows and a DataFrame."""

from __future__ import annotations

import csv
import pathlib

import pytest

import smelt
from conftest import EXAMPLES, ROOT, cli_json, same_bytes

RUNS = str(EXAMPLES / "runs-dense-looped.csv")
DATA = ROOT / "tests" / "data"


def rows() -> list[dict]:
    with open(RUNS, newline="") as f:
        return [{k: (v if k == "arch" else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]


def test_fit_equals_the_cli_json_byte_for_byte() -> None:
    laws = smelt.fit(RUNS, group_by="arch")
    same_bytes(laws.to_dict(), cli_json("fit", RUNS, "--group-by", "arch", "--json"))
    assert [law.label for law in laws.laws] == ["dense", "looped"]


def test_fit_of_rows_equals_the_fit_of_the_file() -> None:
    assert smelt.fit(rows(), group_by="arch").to_dict() == smelt.fit(RUNS, group_by="arch").to_dict()


def test_fit_of_a_dataframe_equals_the_fit_of_the_file() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(RUNS)
    assert smelt.fit(frame, group_by="arch").to_dict() == smelt.fit(RUNS, group_by="arch").to_dict()


def test_a_dataframe_without_a_column_names_the_nearest() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(RUNS).rename(columns={"loss": "Loss"})
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(frame)
    assert str(e.value) == '<DataFrame>: missing column "loss" (required; did you mean "Loss"?)'


def test_frontier_equals_the_cli_json_byte_for_byte(tmp_path: pathlib.Path) -> None:
    laws_file = tmp_path / "laws.json"
    laws_file.write_text(smelt.fit(RUNS, group_by="arch").to_json())
    py = smelt.frontier(str(laws_file), budgets=[1e20, 1e21, 1e22])
    same_bytes(py.to_dict(), cli_json("frontier", "--law", str(laws_file), "--budget", "1e20,1e21,1e22", "--json"))
    assert py.reference == "dense"
    assert py.budgets[0].laws[0].gain is None and py.budgets[0].laws[1].gain > 0


def test_frontier_reports_tokens_per_parameter_and_its_interval() -> None:
    # law-ref.json at 1e22 (docs/scaling.md): N* = 9045158314.06, D* = 184260640753.58, TPP = D* / N* = 20.3711902;
    # its five samples give [17.6114430, 21.3394695]. law-smelt.json at S = 0.85: F* = 41601535391.66,
    # TPP = 6 C / F*^2 = 6e22 / 1.73068775e21 = 34.6682988, no samples, so no interval.
    f = smelt.frontier([DATA / "law-ref.json", DATA / "law-smelt.json"], budgets=1e22, sparsity=0.85)
    dense, sparse = f.budgets[0].laws
    assert dense.tpp == pytest.approx(20.371190238552458, rel=1e-13)
    assert dense.tpp == pytest.approx(dense.tokens / dense.size, rel=1e-13)
    assert dense.tpp_interval == pytest.approx([17.611443004313692, 21.339469504846586], rel=1e-13)
    assert sparse.tpp == pytest.approx(34.668298834350712, rel=1e-13)
    assert sparse.tpp == pytest.approx(sparse.tokens / (sparse.size / 6), rel=1e-13)
    assert sparse.tpp_interval is None
    assert list(dense)[4:8] == ["loss", "tpp", "tpp_interval", "gain"]


def test_frontier_of_a_fit_result_equals_that_of_its_file(tmp_path: pathlib.Path) -> None:
    laws = smelt.fit(RUNS, group_by="arch")
    laws_file = tmp_path / "laws.json"
    laws_file.write_text(laws.to_json())
    a, b = smelt.frontier(laws, 1e21), smelt.frontier(laws_file, 1e21)
    assert a.budgets[0].to_dict() == b.budgets[0].to_dict()


def test_fit_options_are_checked_by_the_library() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(RUNS, form="kaplan")
    assert "form" in str(e.value) and "kaplan" in str(e.value)


def test_frontier_budgets_must_be_positive() -> None:
    with pytest.raises(smelt.ConfigError) as e:
        smelt.frontier(smelt.fit(RUNS), budgets=[0], sparsity=1)
    assert str(e.value).splitlines() == [
        "budgets = 0: must be a positive number of FLOPs",
        "sparsity = 1: must be in [0, 1)",
    ]


def test_renames_read_a_column_under_another_name() -> None:
    renamed = [{("Model Size" if k == "N" else k): v for k, v in r.items()} for r in rows()]
    laws = smelt.fit(renamed, group_by="arch", renames={"Model Size": "N"})
    assert laws.to_dict() == smelt.fit(RUNS, group_by="arch").to_dict()
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(renamed, renames={"Size": "N"})
    assert str(e.value).splitlines()[0] == '<runs>: renames "Size" -> "N": no column "Size"'


def test_missing_and_infinite_values_are_named_by_row_and_column() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(RUNS)
    frame.loc[3, "loss"] = float("nan")  # row 4: pandas' missing value
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(frame)
    assert str(e.value) == "<DataFrame>: row 4: loss: missing value"
    frame.loc[3, "loss"] = float("inf")
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(frame)
    assert str(e.value) == "<DataFrame>: row 4: loss = inf: must be a finite number"


def test_a_label_that_is_not_utf8_is_refused_by_row(tmp_path: pathlib.Path) -> None:
    # Before: the law file's JSON writer threw (RuntimeError here, the CLI's exit 1).
    text = pathlib.Path(RUNS).read_bytes().replace(b",dense\n", b",d\xffx\n", 1)
    path = tmp_path / "runs.csv"
    path.write_bytes(text)
    with pytest.raises(smelt.ConfigError) as e:
        smelt.fit(path, group_by="arch")
    assert str(e.value) == f"{path}: row 1: arch: not UTF-8 text (labels are written to JSON law files)"
