"""Issue 10 point 3: coarse tables are fixed top-down from their least-squares values before the
finer tables are bounded, so a sparse fine table's non-negativity does not bias them."""

import math

import numpy as np
import pytest

import dprelease.postprocess.derived as derived
from dprelease.accounting.allocation import allocate
from dprelease.plan.parse import parse_plan
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from dprelease.postprocess.top_down import fix_top_down
from helpers.plans import plan_dict

STATES = ["A", "B"]
COUNTIES = {"A1": "A", "A2": "A", "A3": "A", "B1": "B", "B2": "B"}


def hierarchy_plan():
    raw = plan_dict()
    raw["columns"]["state"] = {"kind": "categorical", "domain": STATES}
    raw["columns"]["county"] = {
        "kind": "categorical",
        "domain": list(COUNTIES),
        "parent": "state",
        "parent_map": COUNTIES,
    }
    raw["tables"] = [
        {"name": "total", "by": []},
        {"name": "sex", "by": ["sex"]},
        {"name": "state", "by": ["state"]},
        {"name": "county", "by": ["county"]},
        {"name": "state_by_sex", "by": ["state", "sex"]},
        {"name": "county_by_sex", "by": ["county", "sex"]},
    ]
    return parse_plan(raw)


def test_chains_are_fixed_within_their_parent_and_two_parent_tables_are_left_joint():
    plan = hierarchy_plan()
    bys = [spec.by for spec in plan.tables]
    rng = np.random.default_rng(5)
    # consistent real estimates with negative cells, as least squares gives
    county_by_sex = np.array([-3.2, 12.6, 40.1, -1.4, 7.7, 8.8, 0.4, 30.3, 22.5, -2.1])
    by_county = county_by_sex.reshape(5, 2)
    county = by_county.sum(axis=1)
    state = np.array([county[:3].sum(), county[3:].sum()])
    sex = by_county.sum(axis=0)
    state_by_sex = np.vstack([by_county[:3].sum(axis=0), by_county[3:].sum(axis=0)]).reshape(-1)
    estimates = [np.array([state.sum()]), sex, state, county, state_by_sex, county_by_sex]
    total = 115.0
    fixed = fix_top_down(plan.schema, bys, estimates, total=total, integer=True, rng=rng)
    # total, sex (under the total), state (under the total), county (under its state); the
    # by-sex tables have two parents (sex, and state or county): the joint step's
    assert set(fixed) == {0, 1, 2, 3}
    assert fixed[0][0] == total
    assert fixed[1].sum() == fixed[2].sum() == total
    assert fixed[3][:3].sum() == fixed[2][0] and fixed[3][3:].sum() == fixed[2][1]
    for cells in fixed.values():
        assert (cells >= 0).all() and np.array_equal(cells, np.round(cells))


def sparse_plan():
    raw = plan_dict()
    raw["tables"] = [
        {"name": "total", "by": []},
        {"name": "age", "by": ["age"]},
        {"name": "age_by_sex_by_race", "by": ["age", "sex", "race"]},
    ]
    raw["budget"] = {"accounting": "pure", "epsilon": 0.5}
    raw["postprocess"] = {"nonnegative": True, "integer": True, "consistent": True}
    return parse_plan(raw)


def sparse_truth():
    """Age bins 0–3: 150 persons in one of their 8 sex × race cells; bins 4–8: 150 in each of
    the 8 (the shape of experience × education × region on the CPS extract)."""
    joint = np.zeros((9, 2, 4), dtype=np.int64)
    joint[:4, 0, 0] = 150
    joint[4:] = 150
    return {
        "total": joint.sum().reshape(1),
        "age": joint.sum(axis=(1, 2)),
        "age_by_sex_by_race": joint.reshape(-1),
    }


def age_errors(plan, releases: int, seed: int) -> np.ndarray:
    allocation = allocate(plan)
    truth = sparse_truth()
    measurement_set = MeasurementSet(plan, allocation)
    truths = measurement_set.true_measurements(truth)
    rng = np.random.default_rng(seed)
    errors = []
    for _ in range(releases):
        noisy = {
            m.name: truths[m.name] + m.noise.kind.preview(rng, m.noise.scale, m.cells)
            for m in allocation.measurements
        }
        released = derived_postprocess(
            plan, allocation, measurement_set.estimate(noisy), rng=rng
        ).released_counts
        assert released["age"].sum() == released["age_by_sex_by_race"].sum()
        assert released["age"].sum() == released["total"][0]
        errors.append(released["age"] - truth["age"])
    return np.array(errors, dtype=np.float64)


def test_a_dense_coarse_table_over_a_sparse_fine_one_stays_unbiased(monkeypatch):
    plan = sparse_plan()
    expected = allocate(plan).table("age").expected_rmse
    errors = age_errors(plan, releases=120, seed=17)
    se = errors.std(axis=0, ddof=1) / math.sqrt(len(errors))
    # every age bin unbiased (3 SE each, 9 bins), and no worse than its least-squares value
    assert (np.abs(errors.mean(axis=0)) <= 3.5 * se).all()
    rmse = math.sqrt(float(np.mean(errors**2)))
    assert rmse <= expected * 1.1

    # power: with only the grand total fixed (the previous behaviour) the lift of the empty
    # fine cells reaches the sparse bins 0–3 and is taken from the dense bins 4–8
    monkeypatch.setattr(derived, "_bounds_are_zero_or_none", lambda settings: False)
    before = age_errors(plan, releases=120, seed=17)
    sparse_bins = before[:, :4].sum(axis=1)
    assert sparse_bins.mean() > 3 * sparse_bins.std(ddof=1) / math.sqrt(len(before))
    assert math.sqrt(float(np.mean(before**2))) > rmse


@pytest.mark.parametrize("clamp", [[1, None], [0, 500]])
def test_other_clamps_leave_fixing_to_the_joint_step(clamp):
    raw = plan_dict()
    raw["postprocess"] = {"clamp": clamp, "consistent": True}
    assert not derived._bounds_are_zero_or_none(parse_plan(raw).postprocess)
