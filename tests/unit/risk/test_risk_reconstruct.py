"""The reconstruction attack on the bundled sample, generalisation suggestions, and ε as risk."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dprelease.accounting.epsilon_meaning import (
    epsilon_risk_html,
    explain_epsilon,
    max_advantage,
    posterior_bound,
    tpr_bound,
)
from dprelease.data.count import load_data
from dprelease.data.read import read_data
from dprelease.errors import DataError, PlanError
from dprelease.plan.parse import load_plan
from dprelease.plan.survey_weight import SurveyWeight
from dprelease.risk.area_tables import workload
from dprelease.risk.classes import risk_input
from dprelease.risk.generalise import suggest_generalisations
from dprelease.risk.reconstruct import NothingToAttack, reconstruction_attack
from helpers import ROOT

SMALL_AREAS = ROOT / "data" / "census_small_areas.plan.yaml"
SAMPLE = ROOT / "data" / "census_sample.plan.yaml"


@pytest.fixture(scope="module")
def small_areas():
    plan = load_plan(SMALL_AREAS)
    return plan, load_data(plan.data_path, plan)


def test_exact_small_area_tables_give_records_away_and_dp_does_not(small_areas):
    plan, encoded = small_areas
    result = reconstruction_attack(
        plan, encoded, max_areas=60, seconds_per_area=2, rng=np.random.default_rng(1)
    )
    assert result.level == "county"
    assert result.columns == ("age", "sex", "race", "hispanic")
    exact, dp = result.exact, result.dp
    assert dp is not None and dp.epsilon == pytest.approx(1.0, rel=1e-6)
    assert exact.rebuilt == exact.people  # exact tables fix each area's size
    assert exact.areas_without_solution == 0
    assert exact.unique > 0 and exact.people_certain > 0
    assert exact.share > 0.4
    assert dp.share < 0.2
    assert exact.share > 2.5 * dp.share
    assert result.areas_tried == 60 and result.areas_not_tried > 0


def test_sample_plan_publishes_sex_per_county_exactly(small_areas):
    plan = load_plan(SAMPLE)
    encoded = load_data(plan.data_path, plan)
    result = reconstruction_attack(plan, encoded, max_areas=40, with_dp=False)
    assert result.columns == ("sex",)
    assert result.exact.share == 1.0 and result.exact.unique == 40
    assert result.dp is None


def test_no_area_small_enough_is_an_error_not_rates_of_zero(small_areas):
    plan, encoded = small_areas
    with pytest.raises(NothingToAttack) as raised:
        reconstruction_attack(plan, encoded, level="state", max_people=50)
    assert isinstance(raised.value, DataError)  # the user's to fix: exit 2, st.error
    assert raised.value.finer == ("county",)
    assert "choose a finer area level" in str(raised.value).lower()


def test_a_survey_weighted_table_is_no_constraint_of_the_attack():
    """Its cells are weighted totals, not counts of the people the attack rebuilds."""
    plan = load_plan(SAMPLE)
    weighted = dataclasses.replace(
        plan.tables[1], name="w", survey_weight=SurveyWeight("PWGTP", 0, 10)
    )
    load = workload(dataclasses.replace(plan, tables=(*plan.tables, weighted)), "county")
    assert "w" in load.left_out and load.tables == workload(plan, "county").tables


def test_workload_keeps_per_area_tables_and_refuses_a_level_without_them():
    plan = load_plan(SAMPLE)
    assert workload(plan, "county").tables == ((), ("sex",))
    per_area = workload(plan, "county", per_area=True)
    assert ("age", "sex") in per_area.tables and ("race", "hispanic") in per_area.tables
    with pytest.raises(DataError, match="No table of the plan is published per 'income'"):
        workload(plan, "income")
    with pytest.raises(PlanError, match="no column 'nowhere'"):
        workload(plan, "nowhere")


def test_generalisations_reach_k_on_the_plan_hierarchy():
    plan = load_plan(SAMPLE)
    table = read_data(plan.data_path, columns=["county", "age", "sex", "education"])
    data = risk_input(table, ["county", "age", "sex"], "education")
    suggestions, tried = suggest_generalisations(table, data, 5, plan)
    assert suggestions and 0 < tried <= 400
    assert all(s.k >= 5 for s in suggestions)
    assert any(s.levels["county"] == "state" for s in suggestions)
    losses = [s.precision_loss for s in suggestions]
    assert losses == sorted(losses)


def test_epsilon_meaning_numbers():
    assert max_advantage(0.0) == 0.0
    assert max_advantage(1.0) == pytest.approx((math.e - 1) / (math.e + 1))
    assert max_advantage(1.0, 0.01) == pytest.approx((math.e - 1 + 0.02) / (math.e + 1))
    assert posterior_bound(0.5, math.log(3)) == pytest.approx(0.75)
    assert tpr_bound(0.1, 1.0) == pytest.approx(math.e * 0.1)
    meaning = explain_epsilon(1.0, 1e-10)
    assert "2.72" in meaning.sentence and "73.1%" in meaning.sentence
    html = epsilon_risk_html(1.0, 1e-10)
    assert "0.462" in html and "<script" not in html


@given(st.floats(0, 30), st.floats(0, 0.5), st.floats(0, 1))
def test_tpr_bound_is_consistent_with_the_advantage(epsilon, delta, fpr):
    tpr = tpr_bound(fpr, epsilon, delta)
    assert fpr - 1e-12 <= tpr <= 1.0
    assert tpr - fpr <= max_advantage(epsilon, delta) + 1e-9


def test_the_exact_attack_always_has_a_solution_even_out_of_time(small_areas):
    """Issue 24.2: the true records meet the exact tables, so the exact attack never reports
    "no solution"; the per-area workload of the sample includes areas of 150+ people whose
    MILP does not finish in a tenth of a second (the best records found are used instead)."""
    plan, encoded = small_areas
    result = reconstruction_attack(
        plan, encoded, max_areas=20, seconds_per_area=0.1, per_area=True, with_dp=False
    )
    exact = result.exact
    assert exact.areas_without_solution == 0
    assert exact.rebuilt == exact.people
    assert exact.areas_optimal + exact.areas_time_limited == result.areas_tried
    assert exact.areas_time_limited > 0  # the fallback was exercised


def _feasible(space, tables, counts) -> bool:
    return all(
        np.array_equal(np.bincount(cells, weights=counts, minlength=len(values)), values)
        for cells, values in zip(space.cell_of_type, tables, strict=True)
    )


def test_exact_tables_with_a_hierarchy_and_missing_values_are_always_solved(tmp_path):
    """A state > county hierarchy, an `other` label, 'N' and blank values: whatever rows the
    tables leave out, the exact tables stay consistent and the attack finds records for them,
    with the MILP or, without time, table by table."""
    from dprelease.plan.parse import parse_plan
    from dprelease.risk.area_chain import feasible_counts
    from dprelease.risk.area_milp import RecordSpace
    from dprelease.risk.area_tables import exact_area_tables

    rng = np.random.default_rng(3)
    rows = ["state,county,sex,age,race,tenure"]
    counties = {"A1": "A", "A2": "A", "B1": "B"}
    for _ in range(900):
        county = rng.choice(["A1", "A2", "B1", "N", ""], p=[0.3, 0.3, 0.3, 0.05, 0.05])
        state = counties.get(str(county), "N")
        sex = rng.choice(["F", "M", "N", ""], p=[0.45, 0.45, 0.05, 0.05])
        age = rng.choice([str(a) for a in range(0, 90, 7)] + ["N", ""])
        race = rng.choice(["W", "B", "X", "N", ""])
        tenure = rng.choice(["Own", "Rent", ""])
        rows.append(f"{state},{county},{sex},{age},{race},{tenure}")
    path = tmp_path / "areas.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    plan = parse_plan(
        {
            "version": 1,
            "data": str(path),
            "columns": {
                "state": {"kind": "categorical", "domain": ["A", "B"]},
                "county": {
                    "kind": "categorical",
                    "domain": ["A1", "A2", "B1"],
                    "parent": "state",
                    "parent_map": counties,
                },
                "sex": {"kind": "categorical", "domain": ["F", "M"]},
                "age": {"kind": "numeric", "bins": [0, 18, 65, 100]},
                "race": {"kind": "categorical", "domain": ["W", "B", "O"], "other": "O"},
                "tenure": {"kind": "categorical", "domain": ["Own", "Rent"]},
            },
            "tables": [
                {"name": "state_by_sex", "by": ["state", "sex"]},
                {"name": "county_by_age_by_sex", "by": ["county", "age", "sex"]},
                {"name": "county_by_race", "by": ["county", "race"]},
                {"name": "county_by_tenure_by_race", "by": ["county", "tenure", "race"]},
            ],
            "budget": {"accounting": "pure", "epsilon": 1.0},
        }
    )
    encoded = load_data(path, plan)
    result = reconstruction_attack(plan, encoded, seconds_per_area=0.5, with_dp=False)
    assert result.rows_left_out > 0 and result.areas_tried == 3
    assert result.exact.areas_without_solution == 0
    assert result.exact.rebuilt == result.exact.people
    # the table-by-table construction alone meets every exact table of every area
    load = workload(plan, "county")
    keep = encoded.codes["county"] >= 0
    for column in load.columns:
        keep &= encoded.codes[column] >= 0
    space = RecordSpace.of(plan, load)
    tables = exact_area_tables(plan, load, encoded, keep)
    for area in range(3):
        published = [values[area] for values in tables.values]
        counts = feasible_counts(space.sizes, space.axes, space.cell_of_type, published)
        assert counts is not None and _feasible(space, published, counts)


def test_a_cyclic_workload_has_no_table_by_table_construction():
    """Tables a×b, b×c, a×c have no running intersection: the construction declines (the
    MILP alone answers) rather than return records that miss a table."""
    from dprelease.risk.area_chain import chain_order

    assert chain_order(((0, 1), (1, 2), (0, 2))) is None
    assert chain_order(((0, 1), (1, 2), (1,), ())) == [0, 1]
    assert chain_order(((), (2, 3), (0, 1))) is not None


def test_the_table_by_table_records_follow_the_attackers_prior():
    """Tables a and b (2 values each, one person of each): the hand-out pairs them as the
    prior mix makes most likely."""
    from dprelease.risk.area_chain import feasible_counts

    a_of_type, b_of_type = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    tables = [np.array([1.0, 1.0]), np.array([1.0, 1.0])]
    args = ((2, 2), ((0,), (1,)), (a_of_type, b_of_type), tables)
    same = feasible_counts(*args, np.array([0.4, 0.1, 0.1, 0.4]))
    crossed = feasible_counts(*args, np.array([0.1, 0.4, 0.4, 0.1]))
    assert same is not None and same.tolist() == [1, 0, 0, 1]
    assert crossed is not None and crossed.tolist() == [0, 1, 1, 0]
    assert feasible_counts(*args[:3], [np.array([2.0, 0.0]), np.array([1.0, 0.0])]) is None
