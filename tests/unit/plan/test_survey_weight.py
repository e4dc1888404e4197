"""A table's `survey_weight` (issue 37.8): parsed, written back, refused in one line, and its
sensitivity W times a count table's (the noise scale too, under every accountant)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dprelease.accounting.allocation import allocate
from dprelease.plan.parse import dumps_plan, loads_plan
from dprelease.plan.survey_weight import SurveyWeight
from dprelease.plan.table_spec import Sensitivity, sensitivity, table_sensitivity
from helpers.cli import run

PLAN = """version: 1
unit: {unit}
columns:
  sex: {{kind: categorical, domain: [F, M]}}
  age: {{kind: numeric, bins: [0, 18, 120]}}
tables:
  - {{name: sex, by: [sex]}}
  - {{name: w_sex, by: [sex], survey_weight: {weight}}}
budget: {{accounting: {accounting}, allocation: equal, epsilon: 1{delta}}}
"""


def plan_text(
    weight: str = "{column: PWGTP, bounds: [0, 100]}",
    accounting: str = "pure",
    unit: str = "{kind: row}",
) -> str:
    delta = "" if accounting == "pure" else ", delta: 1.0e-9"
    return PLAN.format(weight=weight, accounting=accounting, delta=delta, unit=unit)


def test_a_survey_weight_is_parsed_and_written_back() -> None:
    plan = loads_plan(plan_text(), "p.yaml")
    weighted = plan.table("w_sex")
    assert weighted.survey_weight == SurveyWeight("PWGTP", 0, 100)
    assert plan.table("sex").survey_weight is None
    assert plan.survey_weights == (SurveyWeight("PWGTP", 0, 100),)
    text = dumps_plan(plan, "p.yaml")
    assert "survey_weight: {column: PWGTP, bounds: [0, 100]}" in text
    assert loads_plan(text, "p.yaml").tables == plan.tables
    assert loads_plan(dumps_plan(plan, "p.json"), "p.json").tables == plan.tables


def test_whole_bounds_written_as_floats_are_whole() -> None:
    plan = loads_plan(plan_text("{column: PWGTP, bounds: [0.0, 2000.0]}"), "p.yaml")
    assert plan.table("w_sex").survey_weight == SurveyWeight("PWGTP", 0, 2000)


@pytest.mark.parametrize(
    ("weight", "says"),
    [
        ("{column: PWGTP, bounds: [0, 0]}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: [0, -5]}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: [50, 50]}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: [-1, 5]}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: [0, 1.5]}", "whole numbers"),
        ("{column: PWGTP, bounds: [0, .inf]}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: 100}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP}", "survey_weight.bounds must be [0, W]"),
        ("{column: PWGTP, bounds: [0, 9], scale: 2}", "unknown keys ['scale']"),
        ("{bounds: [0, 9]}", "survey_weight.column must be a column name"),
        ("PWGTP", "survey_weight must be {column: C, bounds: [0, W]}"),
        ("{column: sex, bounds: [0, 9]}", "is declared categorical"),
        ("{column: age, bounds: [0, 9]}", None),  # a declared numeric column is a weight
    ],
)
def test_a_bad_survey_weight_is_refused_in_one_line(
    tmp_path: Path, weight: str, says: str | None
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(plan_text(weight))
    result = run("plan", str(path))
    if says is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert says in lines[0] and "Traceback" not in result.stderr


def test_the_unit_id_and_a_statistic_cannot_carry_a_weight(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(plan_text("{column: hh, bounds: [0, 9]}", unit="{kind: id, column: hh}"))
    result = run("plan", str(path))
    assert result.returncode == 2 and "is the unit id column" in result.stderr
    text = plan_text().replace(
        "  - {name: sex, by: [sex]}",
        "  - {name: m, by: [sex], stat: {sum: age, bounds: [0, 9]}, "
        "survey_weight: {column: PWGTP, bounds: [0, 9]}}\n  - {name: sex, by: [sex]}",
    )
    path.write_text(text)
    result = run("plan", str(path))
    assert result.returncode == 2 and "a statistic cannot have a survey_weight" in result.stderr


def test_a_weighted_tables_sensitivity_is_w_times_a_count_tables() -> None:
    plan = loads_plan(plan_text(unit="{kind: id, column: hh, max_rows: 3}"), "p.yaml")
    counts = sensitivity(plan.unit, "add_remove")
    assert counts == Sensitivity(l1=3, l2_squared=9)
    assert table_sensitivity(plan.table("w_sex"), plan.unit, "add_remove") == Sensitivity(
        l1=300, l2_squared=90000
    )
    assert table_sensitivity(plan.table("w_sex"), plan.unit, "replace") == Sensitivity(
        l1=600, l2_squared=2 * 90000
    )


@pytest.mark.parametrize("accounting", ["pure", "zcdp", "approx"])
def test_the_noise_of_a_weighted_table_is_w_times_at_the_same_budget(accounting: str) -> None:
    """ε = 1 split equally, W = 100: the weighted table's scale is 100× the count table's
    (rounded up, never down), at the same ε (ρ) share."""
    allocation = allocate(loads_plan(plan_text(accounting=accounting), "p.yaml"))
    count, weighted = allocation.table("sex"), allocation.table("w_sex")
    assert weighted.sensitivity.l1 == 100 * count.sensitivity.l1
    assert weighted.noise.mechanism == count.noise.mechanism
    assert weighted.noise.scale >= 100 * count.noise.scale
    assert weighted.noise.scale == pytest.approx(100 * count.noise.scale, rel=1e-12)
    assert (weighted.epsilon, weighted.rho) == (count.epsilon, count.rho)
    assert weighted.to_dict()["survey_weight"] == {"column": "PWGTP", "bounds": [0, 100]}
    assert "survey_weight" not in count.to_dict()
    if accounting == "pure":
        assert count.noise.scale == pytest.approx(2.0)  # ε = 1/2 each, Δ = 1
        assert weighted.noise.scale == pytest.approx(200.0)


def test_weighted_tables_are_measured_as_listed_and_the_advice_says_so() -> None:
    text = plan_text().replace("allocation: equal, ", "")
    allocation = allocate(loads_plan(text, "p.yaml"))
    assert allocation.strategy == "workload"
    assert any("Survey-weighted tables (w_sex)" in note for note in allocation.advice)
    assert {m.name for m in allocation.measurements} == {"sex", "w_sex"}
