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
from helpers.fuzz import VALID_DATA, VALID_PLAN, dump_plan, mutate_plan, value_paths, values

# Any value a YAML or JSON plan could hold, nested a little.


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
    path = choice.draw(st.sampled_from(value_paths(VALID_PLAN)))
    plan = mutate_plan(VALID_PLAN, path, how, value)
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis runs many cases per tmp_path
    plan_file = folder / ("plan.json" if as_json else "plan.yaml")
    plan_file.write_text(dump_plan(plan, as_json), encoding="utf-8")
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
