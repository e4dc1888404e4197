"""The what-if's fast paths: the pure optimiser without scipy, the domain kept per schema."""

from __future__ import annotations

import numpy as np
import pytest

from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.strategy.domain import build_domain
from dprelease.strategy.optimise import epsilon_shape
from dprelease.strategy.select import WorkloadTable, _model, _pure_value
from helpers.strategy import SELECT_COLUMNS as COLUMNS
from helpers.strategy import SELECT_SCHEMA as SCHEMA

PLAN = "data/census_sample.plan.yaml"


def _problem():
    tables = [WorkloadTable(c, (c,)) for c in COLUMNS] + [
        WorkloadTable("county_sex", ("county", "sex")),
        WorkloadTable("age_race", ("age", "race")),
        WorkloadTable("state_age_sex", ("state", "age", "sex")),
    ]
    domain = build_domain(SCHEMA, [t.by for t in tables])
    workload = tuple(domain.marginal_of(t.by) for t in tables)
    weights = np.array([1 / domain.marginal_cells(m) for m in workload])
    return _model(domain, workload, "auto"), weights


@pytest.mark.parametrize(("epsilon", "l1"), [(0.3, 4), (1.0, 4), (8.0, 2)])
def test_pure_shape_is_a_kkt_point_and_beats_random_shapes(epsilon: float, l1: int) -> None:
    model, weights = _problem()
    start = np.ones(len(model.candidates))
    shape = epsilon_shape(model, weights, l1, epsilon, start, exact=True)
    assert shape.min() >= 0 and shape.sum() == pytest.approx(1.0)
    best = _pure_value(model, weights, l1, epsilon, shape)
    assert best <= _pure_value(model, weights, l1, epsilon, start / start.sum())
    # KKT on the simplex: moving a little mass into any used share changes the error by
    # nothing to first order, and into an unused one does not lower it (away from the optimum
    # such a move changes it by about the error itself times the step).
    step = 1e-7
    for j in range(len(shape)):
        moved = shape.copy()
        moved[j] += step
        moved /= moved.sum()
        gain = (best - _pure_value(model, weights, l1, epsilon, moved)) / step
        assert gain <= 1e-4 * best
        if shape[j] > 0:
            assert abs(gain) <= 1e-4 * best
    rng = np.random.default_rng(7)
    for _ in range(200):
        other = rng.dirichlet(np.ones(len(shape)))
        assert best <= _pure_value(model, weights, l1, epsilon, other) * (1 + 1e-9)


def test_pure_selection_needs_no_scipy_optimize() -> None:
    # importing scipy.optimize costs ~0.5 s of CPU; the pure shape no longer uses it
    import dprelease.strategy.optimise as optimise

    assert "minimize" not in vars(optimise)
    assert not any(name.startswith("scipy.optimize") for name in vars(optimise))


def test_domain_is_kept_per_schema_and_table_set() -> None:
    plan = load_plan(PLAN)
    again = parse_plan(plan_to_dict(plan))  # an equal schema, another object
    bys = [t.by for t in plan.tables]
    assert again.schema is not plan.schema and again.schema.key == plan.schema.key
    assert build_domain(again.schema, bys) is build_domain(plan.schema, bys)
    assert build_domain(plan.schema, bys[:2]) is not build_domain(plan.schema, bys)
    changed = plan_to_dict(plan)
    county = changed["columns"]["county"]
    county["domain"] = county["domain"][:-1]
    county["parent_map"] = {k: county["parent_map"][k] for k in county["domain"]}
    other = parse_plan(changed)
    assert other.schema.key != plan.schema.key
    assert build_domain(other.schema, bys) != build_domain(plan.schema, bys)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 1.7, 3.0, 10.0])
def test_sample_plan_measures_nothing_with_a_vanishing_share(epsilon: float) -> None:
    # With the polish skipped (b > 2), a share the updates had shrunk to 1e-125 of ε was once
    # measured, with noise of 1e125 that broke the release's consistency step.
    from dataclasses import replace

    from dprelease.accounting.allocation import allocate

    plan = load_plan(PLAN)
    plan = replace(plan, budget=replace(plan.budget, epsilon=epsilon))
    shares = [m.epsilon for m in allocate(plan).measurements]
    assert all(s is not None and s >= 1e-3 * max(s for s in shares if s) for s in shares)
