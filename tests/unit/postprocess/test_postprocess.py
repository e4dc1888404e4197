"""Post-processing with exact answers: the two-leaf tree, unchanged consistent input,
idempotence, weights, constraints kept by integer rounding, the switches and their order."""

import numpy as np
import pytest

from dprelease.plan.model import Postprocess
from dprelease.postprocess.pipeline import STEP_ORDER, postprocess
from dprelease.postprocess.subtables import Workload, cell_map, shared_key
from helpers.postprocess import (
    FULL,
    ONLY_CONSISTENT,
    assert_consistent,
    children_sum,
    geo_plan,
    margin,
)

TREE_COLUMNS = {
    "parent": {"kind": "categorical", "domain": ["P"]},
    "leaf": {
        "kind": "categorical",
        "domain": ["x", "y"],
        "parent": "parent",
        "parent_map": {"x": "P", "y": "P"},
    },
}
GEO_TABLES = [
    {"name": "total", "by": []},
    {"name": "state", "by": ["state"]},
    {"name": "county", "by": ["county"]},
    {"name": "sex", "by": ["sex"]},
    {"name": "age_by_sex", "by": ["age", "sex"]},
    {"name": "state_by_sex", "by": ["state", "sex"]},
    {"name": "county_by_sex", "by": ["county", "sex"]},
    {"name": "age_by_state", "by": ["age", "state"]},
]


def geo_noisy(plan, rng, low=-4, high=30):
    return {s.name: rng.integers(low, high, s.cells(plan.schema)) for s in plan.tables}


@pytest.mark.parametrize("tables", ["hierarchy", "total"])
def test_two_leaf_tree(tables):
    if tables == "hierarchy":
        specs = [{"name": "parent", "by": ["parent"]}, {"name": "leaves", "by": ["leaf"]}]
    else:
        specs = [{"name": "parent", "by": []}, {"name": "leaves", "by": ["leaf"]}]
    plan, allocation = geo_plan(specs, columns=TREE_COLUMNS)
    noisy = {"parent": np.array([0.0]), "leaves": np.array([0.5, 0.5])}
    out = postprocess(plan, allocation, noisy, ONLY_CONSISTENT).released_counts
    np.testing.assert_allclose(out["leaves"], [1 / 6, 1 / 6], rtol=1e-9)
    np.testing.assert_allclose(out["parent"], [1 / 3], rtol=1e-9)


def test_cell_map_sums_children_into_ancestors():
    plan, _ = geo_plan(GEO_TABLES)
    assert list(cell_map(plan.schema, ("county", "sex"), ("state",))) == [0] * 4 + [1] * 6
    assert list(cell_map(plan.schema, ("age", "sex"), ("sex",))) == [0, 1] * 3
    assert list(cell_map(plan.schema, ("sex", "county"), ("state", "sex"))) == (
        [0, 0, 2, 2, 2, 1, 1, 3, 3, 3]
    )
    assert shared_key(plan.schema, ("county", "sex"), ("age", "state")) == ("state",)
    assert shared_key(plan.schema, ("age", "sex"), ("county",)) == ()
    keys = Workload(plan.schema, tuple(s.by for s in plan.tables)).keys
    assert keys[0] == () and set(keys) >= {("state",), ("sex",), ("state", "sex")}


def test_consistent_tables_come_back_unchanged():
    plan, allocation = geo_plan(GEO_TABLES)
    rng = np.random.default_rng(3)
    joint = rng.integers(0, 9, (5, 3, 2))  # county × age × sex: a true data set
    state_of = np.array([0, 0, 1, 1, 1])
    by_state = np.stack([joint[state_of == s].sum(0) for s in range(2)])  # state × age × sex
    truth = {
        "total": np.array([joint.sum()]),
        "state": by_state.sum((1, 2)),
        "county": joint.sum((1, 2)),
        "sex": joint.sum((0, 1)),
        "age_by_sex": joint.sum(0).ravel(),
        "state_by_sex": by_state.sum(1).ravel(),
        "county_by_sex": joint.sum(1).ravel(),
        "age_by_state": by_state.sum(2).T.ravel(),
    }
    for settings in (ONLY_CONSISTENT, FULL):
        out = postprocess(plan, allocation, truth, settings).released_counts
        for name, values in truth.items():
            np.testing.assert_allclose(out[name], values, atol=1e-9, err_msg=name)


@pytest.mark.parametrize(
    "settings",
    [
        ONLY_CONSISTENT,
        FULL,
        Postprocess(clamp=(None, None), nonnegative=True, integer=False, consistent=True),
        Postprocess(clamp=(None, None), nonnegative=False, integer=True, consistent=True),
        Postprocess(clamp=(0, 25), nonnegative=True, integer=True, consistent=False),
    ],
)
def test_every_step_is_idempotent(settings):
    plan, allocation = geo_plan(GEO_TABLES)
    noisy = geo_noisy(plan, np.random.default_rng(5))
    once = postprocess(plan, allocation, noisy, settings).released_counts
    twice = postprocess(plan, allocation, once, settings).released_counts
    for name in once:
        np.testing.assert_allclose(twice[name], once[name], atol=1e-7, err_msg=name)


def test_more_budget_stays_closer_to_its_measurement():
    specs = [{"name": "sex", "by": ["sex"]}, {"name": "age_by_sex", "by": ["age", "sex"]}]
    noisy = {"sex": np.array([100.0, 100.0]), "age_by_sex": np.full(6, 40.0)}  # sums 120, 120
    moved = {}
    for weight in (1, 9):
        specs[0]["weight"] = weight
        plan, allocation = geo_plan(specs, allocation="weighted")
        out = postprocess(plan, allocation, noisy, ONLY_CONSISTENT).released_counts
        moved[weight] = abs(out["sex"][0] - 100.0)
        # the answer is the inverse-variance average of the two measurements of each sex
        v_sex = allocation.table("sex").noise.variance
        v_sum = 3 * allocation.table("age_by_sex").noise.variance
        expected = (100 / v_sex + 120 / v_sum) / (1 / v_sex + 1 / v_sum)
        assert out["sex"][0] == pytest.approx(expected, rel=1e-9)
    assert moved[9] < moved[1]


@pytest.mark.parametrize("method", ["milp", "sequential"])
def test_integer_rounding_keeps_every_constraint(method):
    plan, allocation = geo_plan(GEO_TABLES)
    for seed in range(4):
        noisy = geo_noisy(plan, np.random.default_rng(seed))
        result = postprocess(plan, allocation, noisy, FULL, rounding=method)
        assert result.rounding == method
        out = result.released_counts
        for values in out.values():
            assert values.dtype == np.int64 and values.min() >= 0
        assert_consistent(plan, out, exact=True)
        # independent checks: children sum to parents, shared sub-tables, equal totals
        counties = children_sum(plan, out["county"], "county", ("county",))
        assert np.array_equal(counties, out["state"])
        assert np.array_equal(
            children_sum(plan, out["county_by_sex"], "county", ("county", "sex")),
            out["state_by_sex"],
        )
        assert np.array_equal(out["age_by_sex"].reshape(3, 2).sum(0), out["sex"])
        totals = {int(v.sum()) for v in out.values()}
        assert totals == {int(out["total"][0])}


def test_rounded_cells_stay_next_to_the_estimate():
    plan, allocation = geo_plan(GEO_TABLES)
    noisy = geo_noisy(plan, np.random.default_rng(11), low=0, high=50)
    settings = Postprocess(clamp=(None, None), nonnegative=True, integer=False, consistent=True)
    real = postprocess(plan, allocation, noisy, settings).released_counts
    whole = postprocess(plan, allocation, noisy, FULL).released_counts
    for name in real:
        assert np.abs(whole[name] - real[name]).max() <= 2, name


def test_switches_and_order():
    plan, allocation = geo_plan(GEO_TABLES)
    noisy = geo_noisy(plan, np.random.default_rng(1))
    assert STEP_ORDER == ("consistent", "clamp", "nonnegative", "integer")
    result = postprocess(plan, allocation, noisy, FULL)
    assert result.steps_applied == STEP_ORDER and result.steps_skipped == ()
    off = Postprocess(clamp=(None, None), nonnegative=False, integer=False, consistent=False)
    result = postprocess(plan, allocation, noisy, off)
    assert result.steps_applied == ()
    assert all(np.array_equal(result.released_counts[n], noisy[n]) for n in noisy)
    # default settings are the plan's (consistent on in a default plan, issue 24)
    assert postprocess(plan, allocation, noisy).steps_applied == (
        "consistent",
        "nonnegative",
        "integer",
    )


def test_clamp_with_consistency():
    plan, allocation = geo_plan(GEO_TABLES)
    noisy = geo_noisy(plan, np.random.default_rng(2))
    # [0, 1e6] can hold in every cell: applied, exactly consistent
    wide = Postprocess(clamp=(0, 1e6), nonnegative=True, integer=True, consistent=True)
    result = postprocess(plan, allocation, noisy, wide)
    assert result.steps_applied == STEP_ORDER
    # an upper bound of 3 cannot hold for a total and all its cells: skipped, still consistent
    tight = Postprocess(clamp=(0, 3), nonnegative=True, integer=True, consistent=True)
    result = postprocess(plan, allocation, noisy, tight)
    assert result.steps_skipped == ("clamp",)
    assert result.steps_applied == ("consistent", "nonnegative", "integer")
    assert_consistent(plan, result.released_counts, exact=True)


def test_nonnegative_consistent_is_the_bounded_optimum():
    """Two leaves measured −3 and 5, parent 2, equal variances: the bounded WLS optimum puts
    the negative leaf at 0; the rest is the tree answer over the free cells."""
    specs = [{"name": "parent", "by": ["parent"]}, {"name": "leaves", "by": ["leaf"]}]
    plan, allocation = geo_plan(specs, columns=TREE_COLUMNS)
    noisy = {"parent": np.array([2.0]), "leaves": np.array([-3.0, 5.0])}
    settings = Postprocess(clamp=(None, None), nonnegative=True, integer=False, consistent=True)
    out = postprocess(plan, allocation, noisy, settings).released_counts
    # with leaf x = 0: minimise (p − 2)² + (y − 5)² with p = y → p = y = 3.5
    np.testing.assert_allclose(out["leaves"], [0.0, 3.5], atol=1e-9)
    np.testing.assert_allclose(out["parent"], [3.5], atol=1e-9)


def test_margin_helper_agrees_with_reshape():
    plan, _ = geo_plan(GEO_TABLES)
    values = np.arange(6.0)
    np.testing.assert_array_equal(
        margin(plan, "age_by_sex", values, ("sex",)), values.reshape(3, 2).sum(0)
    )
