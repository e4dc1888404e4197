"""Inputs nobody wrote by hand: random plans and random data files through the CLI.

The bad-input suite checks kinds we thought of; this checks the contract on inputs we did
not. Whatever the plan or the bytes, `dprelease` either succeeds or exits 2 with `error: ...`
lines (one per problem: a plan lists all its problems at once), and never raises (an uncaught
exception here is a traceback for the user).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dprelease import cli

VALID_PLAN: dict[str, Any] = {
    "columns": {
        "sex": {"kind": "categorical", "domain": ["F", "M", "X"], "other": "X"},
        "age": {"kind": "numeric", "bins": [0, 18, 65, 120]},
        "region": {"kind": "categorical", "domain": ["north", "south"], "parent": None},
    },
    "tables": [
        {"name": "sex", "by": ["sex"]},
        {"name": "age_by_sex", "by": ["age", "sex"], "weight": 2},
    ],
    "budget": {"accounting": "zcdp", "epsilon": 1, "delta": 1e-9, "allocation": "optimal"},
    "postprocess": {"nonnegative": True, "integer": True, "consistent": True},
}
VALID_DATA = b"sex,age,region\nF,30,north\nM,70,south\nF,12,north\nM,44,east\n"

# Any value a YAML or JSON plan could hold, nested a little.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["sex", "age", "region", "zcdp", "pure", "advanced", "approx", "numeric"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the plan a mutation can touch."""
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += _paths(child, (*prefix, index))
    return found


def _mutate(plan: dict[str, Any], path: tuple[Any, ...], how: str, value: Any) -> Any:
    plan = json.loads(json.dumps(plan))
    if not path:
        return value if how == "replace" else plan
    parent = plan
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "delete":
        del parent[last]
    elif isinstance(parent, dict):  # add a key next to this one
        parent[f"{last}_extra"] = value
    else:
        parent.append(value)
    return plan


def _dump(plan: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(plan, allow_nan=True)
    return yaml.safe_dump(plan, allow_unicode=True)


def _assert_contract(code: int, stderr: str) -> None:
    assert "Traceback" not in stderr
    if code == 0:
        return
    lines = stderr.splitlines()
    assert code == 2, stderr
    assert lines and all(line.startswith("error: ") and len(line) > 10 for line in lines), stderr


FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    choice=st.data(),
    how=st.sampled_from(["replace", "delete", "add"]),
    value=values,
    as_json=st.booleans(),
    command=st.sampled_from(["validate", "plan", "release"]),
)
def test_a_randomly_broken_plan_gives_one_error_line_or_works(
    tmp_path: Path, capsys, choice, how: str, value: Any, as_json: bool, command: str
):
    path = choice.draw(st.sampled_from(_paths(VALID_PLAN)))
    plan = _mutate(VALID_PLAN, path, how, value)
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis runs many cases per tmp_path
    plan_file = folder / ("plan.json" if as_json else "plan.yaml")
    plan_file.write_text(_dump(plan, as_json), encoding="utf-8")
    data = folder / "data.csv"
    data.write_bytes(VALID_DATA)
    args = [command, str(plan_file)]
    if command != "plan":
        args += ["--data", str(data)]
    if command == "release":
        args += ["--out", str(folder / "out")]
    code = cli.main(args)
    _assert_contract(code, capsys.readouterr().err)


@FUZZ
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "replace"]),
            st.integers(min_value=0, max_value=len(VALID_DATA)),
            st.binary(min_size=1, max_size=4),
        ),
        min_size=1,
        max_size=6,
    ),
    suffix=st.sampled_from([".csv", ".tsv", ".txt", ".parquet", ".xlsx"]),
)
def test_randomly_corrupted_data_gives_one_error_line_or_works(
    tmp_path: Path, capsys, edits: list[tuple[str, int, bytes]], suffix: str
):
    data = bytearray(VALID_DATA)
    for how, at, chunk in edits:
        at = min(at, len(data))
        if how == "insert":
            data[at:at] = chunk
        elif how == "delete":
            del data[at : at + len(chunk)]
        else:
            data[at : at + len(chunk)] = chunk
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    plan_file = folder / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(VALID_PLAN), encoding="utf-8")
    path = folder / f"data{suffix}"
    path.write_bytes(bytes(data))
    code = cli.main(["release", str(plan_file), "--data", str(path), "--out", str(folder / "o")])
    _assert_contract(code, capsys.readouterr().err)


def test_the_unbroken_inputs_are_released(tmp_path: Path, capsys):
    """The fuzzing starts from inputs that work, so a mutation is what breaks them."""
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(VALID_PLAN), encoding="utf-8")
    data = tmp_path / "data.csv"
    data.write_bytes(VALID_DATA)
    code = cli.main(["release", str(plan_file), "--data", str(data), "--out", str(tmp_path / "o")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "o" / "metadata.json").is_file()


@pytest.mark.parametrize("accounting", ["zcdp", "pure"])
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf, 0.0, -1.0, 1e308, 5e-324])
def test_odd_epsilons_keep_the_contract(tmp_path: Path, capsys, number: float, accounting: str):
    """NaN, ±inf, 0 and −1 are refused; the extremes either plan or give one clear error."""
    plan = json.loads(json.dumps(VALID_PLAN))
    plan["budget"].update(epsilon=number, accounting=accounting)
    if accounting == "pure":
        del plan["budget"]["delta"]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan, allow_nan=True), encoding="utf-8")
    code = cli.main(["plan", str(plan_file)])
    _assert_contract(code, capsys.readouterr().err)
    if not (math.isfinite(number) and number > 0):
        assert code == 2
