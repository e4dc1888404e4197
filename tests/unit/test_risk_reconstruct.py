"""The reconstruction attack on the bundled sample, generalisation suggestions, and ε as risk."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dprelease.data.count import load_data
from dprelease.data.read import read_data
from dprelease.errors import DataError, PlanError
from dprelease.plan.parse import load_plan
from dprelease.risk.area_tables import workload
from dprelease.risk.classes import risk_input
from dprelease.risk.epsilon_meaning import (
    epsilon_risk_html,
    explain_epsilon,
    max_advantage,
    posterior_bound,
    tpr_bound,
)
from dprelease.risk.generalise import suggest_generalisations
from dprelease.risk.reconstruct import reconstruction_attack

ROOT = Path(__file__).resolve().parents[2]
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
