"""Property tests: on random small workloads over a geography hierarchy, post-processing keeps
every constraint exactly, gives non-negative integers, and is idempotent."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dprelease.plan.model import Postprocess
from dprelease.postprocess.pipeline import postprocess
from helpers.postprocess import FULL, assert_consistent, geo_plan

COLUMN_SETS = [
    (),
    ("state",),
    ("county",),
    ("sex",),
    ("age",),
    ("state", "sex"),
    ("county", "sex"),
    ("age", "sex"),
    ("age", "state"),
    ("sex", "age", "county"),
]


@st.composite
def workloads(draw):
    chosen = draw(st.lists(st.sampled_from(COLUMN_SETS), min_size=1, max_size=5, unique=True))
    weights = draw(st.lists(st.integers(1, 8), min_size=len(chosen), max_size=len(chosen)))
    tables = [
        {"name": f"t{i}", "by": list(by), "weight": w}
        for i, (by, w) in enumerate(zip(chosen, weights, strict=True))
    ]
    plan, allocation = geo_plan(tables, allocation="weighted")
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    noisy = {s.name: rng.integers(-10, 40, s.cells(plan.schema)) for s in plan.tables}
    method = draw(st.sampled_from(["milp", "sequential"]))
    return plan, allocation, noisy, method


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_full_pipeline_keeps_constraints_and_is_idempotent(case):
    plan, allocation, noisy, method = case
    out = postprocess(plan, allocation, noisy, FULL, rounding=method).released_counts
    for values in out.values():
        assert values.dtype == np.int64 and values.min() >= 0
    assert_consistent(plan, out, exact=True)
    again = postprocess(plan, allocation, out, FULL, rounding=method).released_counts
    for name in out:
        assert np.array_equal(again[name], out[name])


@settings(max_examples=30, deadline=None)
@given(workloads())
def test_least_squares_alone_is_consistent_and_a_projection(case):
    plan, allocation, noisy, _ = case
    only = Postprocess(clamp=(None, None), nonnegative=False, integer=False, consistent=True)
    out = postprocess(plan, allocation, noisy, only).released_counts
    assert_consistent(plan, out, exact=False)
    again = postprocess(plan, allocation, out, only).released_counts
    for name in out:
        np.testing.assert_allclose(again[name], out[name], atol=1e-7)
