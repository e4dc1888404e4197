"""Issue 35, bench findings (`bench/bench_admission.py 40 35 12`, plans 22, 27 and 30): small
plans whose post-processing ran far past what admission counted.

- 22: 8 tables over 5 columns, one of them one-valued (16,000 cells): the active set's 27
  solves ran to the conjugate-gradient cap (34 s), then sequential rounding met a table whose
  three rounded sub-tables no whole table meets (`InternalError`). Now the active set's
  iterations are capped and counted: refused in one line before anything runs.
- 27: 7 tables of 3,309 cells, each run 0.6 s in the active set and 0.9 s in the MILP
  rounding, estimated 0.08 s: 20 accuracy reruns, 12.6 s. Now the MILP is counted.
- 30: a 4,320-cell table with three sub-tables to match: two MILPs of 20 s each (74 s with
  synthetic). Now held to a time per cell, counted by admission.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from dprelease.errors import ResourceError
from dprelease.limits import ACCURACY_WORK_NS
from dprelease.plan.parse import parse_plan
from dprelease.postprocess.accuracy import simulations_within
from dprelease.postprocess.cost import run_ns
from dprelease.postprocess.rounding import RoundingFailed, _round_matching
from dprelease.release.admitted import admit_plan


def _columns(sizes: dict[str, int]) -> dict:
    return {
        name: {"kind": "categorical", "domain": [f"v{i}" for i in range(size)]}
        for name, size in sizes.items()
    }


def _plan(sizes: dict[str, int], bys: list[str], budget: dict, **extra: object) -> dict:
    tables = [{"name": f"t{i}", "by": by.split() if by else []} for i, by in enumerate(bys)]
    return {
        "version": 1,
        "neighbors": "replace",
        "columns": _columns(sizes),
        "tables": tables,
        "budget": {"allocation": "optimal", **budget},
        "postprocess": {"consistent": True},
        **extra,
    }


PLAN_22 = _plan(
    {"c0": 12, "c1": 11, "c2": 5, "c3": 10, "c4": 1},
    [
        *("c4", "c0 c1 c2 c3", "c1 c3 c4", "c0 c1 c2 c3 c4"),
        *("c0 c2 c3", "c0 c1 c3", "c1 c2 c3", "c1 c3 c4"),
    ],
    {"accounting": "pure", "epsilon": 0.18, "strategy": "workload"},
)
PLAN_27 = _plan(
    {"c0": 6, "c1": 11, "c2": 10, "c3": 3, "c4": 2, "c5": 4, "c6": 9},
    ["c1 c2 c5", "", "c4 c6", "c1 c2 c3", "c2 c3 c6", "c2 c6", "c2 c3 c4 c5 c6"],
    {"accounting": "approx", "epsilon": 0.000208, "strategy": "auto", "delta": 1e-12},
)

PLAN_30 = _plan(
    {"c0": 5, "c1": 12, "c2": 10, "c3": 4, "c4": 9},
    ["c0 c1 c2 c3", "c1 c2 c3 c4", "c2 c3 c4", "c1 c4"],
    {"accounting": "renyi", "epsilon": 0.302, "strategy": "auto", "delta": 1e-6},
    structural_zeros=[{"c4": ["v0"]}],
)
PLAN_30["columns"]["c1"].update(parent="c0", parent_map={f"v{i}": f"v{i % 5}" for i in range(12)})


def test_plan_30s_table_with_three_sub_tables_has_its_milp_counted():
    """c1 × c2 × c3 × c4 (4,320 cells) matches c1 × c2 × c3, c2 × c3 × c4 and c1 × c4."""
    assert run_ns(parse_plan(PLAN_30), typical=True) >= 4_320 * 300_000


def test_plan_22_is_refused_in_one_line_before_anything_runs():
    started = time.process_time()
    with pytest.raises(ResourceError, match="CONSISTENCY_WORK_NS") as refused:
        admit_plan(parse_plan(PLAN_22))
    assert time.process_time() - started < 2
    assert "\n" not in str(refused.value)


def test_plan_27s_accuracy_reruns_count_the_rounding_they_repeat():
    plan = parse_plan(PLAN_27)
    typical = run_ns(plan, typical=True)
    assert typical >= 3_309 * 300_000  # the whole-problem MILP, per cell (0.9 s measured)
    count = simulations_within(plan)
    assert count < 20 and (count + 1) * typical <= ACCURACY_WORK_NS + typical


def test_three_sub_tables_no_whole_table_meets_fail_fast_not_internally():
    """A × B and B × C say A = B = C, A × C says A ≠ C: pairwise consistent, no table has
    them (the shape of plan 22's and 30's tables). Refused by the MILP in its time, and the
    pipeline then skips 'integer' and says so."""
    a, b, c = np.unravel_index(np.arange(8), (2, 2, 2))
    sums = [
        (a * 2 + b, np.array([1.0, 0, 0, 1])),
        (b * 2 + c, np.array([1.0, 0, 0, 1])),
        (a * 2 + c, np.array([0.0, 1, 1, 0])),
    ]
    started = time.perf_counter()
    with pytest.raises(RoundingFailed):
        _round_matching(np.full(8, 0.25), sums, np.zeros(8), np.full(8, np.inf))
    assert time.perf_counter() - started < 2
