"""Issue 26: a whole plan's allocation is stats/'s (`PlanAllocation`, `allocate`); accounting's
`allocate` prices the count tables only, so no import runs up from accounting/ to stats/."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dprelease.accounting.allocation import allocate as allocate_counts
from dprelease.accounting.tradeoffs import moe_curves
from dprelease.errors import InternalError
from dprelease.plan.parse import parse_plan
from dprelease.stats.allocation import PlanAllocation, allocate, plan_allocation


def raw_plan(*, statistics: bool, discover: bool = False) -> dict[str, Any]:
    county: Any = {"discover": {"min_count": 20}} if discover else ["A", "B", "C"]
    tables: list[dict[str, Any]] = [
        {"name": "by_sex", "by": ["sex"]},
        {"name": "by_county", "by": ["county"]},
    ]
    if statistics:
        tables.append(
            {"name": "income", "by": ["sex"], "stat": {"sum": "income", "bounds": [0, 1000]}}
        )
    return {
        "version": 1,
        "columns": {
            "sex": {"kind": "categorical", "domain": ["Female", "Male"]},
            "county": {"kind": "categorical", "domain": county},
        },
        "tables": tables,
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-8},
    }


def test_the_count_tables_allocation_refuses_a_plan_with_statistics() -> None:
    for raw in (raw_plan(statistics=True), raw_plan(statistics=False, discover=True)):
        with pytest.raises(InternalError, match=r"dprelease\.stats\.allocation\.allocate"):
            allocate_counts(parse_plan(raw))


def test_a_plan_of_count_tables_is_allocated_as_before() -> None:
    plan = parse_plan(raw_plan(statistics=False))
    whole = allocate(plan)
    assert isinstance(whole, PlanAllocation)
    assert whole.statistics == () and whole.discoveries == ()
    counts = allocate_counts(plan)
    assert json.dumps(whole.to_dict()) == json.dumps(counts.to_dict())  # same keys, same order
    assert whole.total == counts.total and whole.tables == counts.tables


def test_statistics_are_listed_as_tables_and_discoveries_follow_advice() -> None:
    whole = allocate(parse_plan(raw_plan(statistics=True, discover=True)))
    out = whole.to_dict()
    assert [t["name"] for t in out["tables"]] == ["by_sex", "by_county", "income"]
    keys = list(out)
    assert keys[keys.index("advice") + 1] == "discoveries"
    assert [d["column"] for d in out["discoveries"]] == ["county"]


def test_a_count_allocation_stands_for_a_plan_without_statistics_only() -> None:
    plan = parse_plan(raw_plan(statistics=False))
    given = plan_allocation(plan, allocate_counts(plan))  # code exported before issue 26
    assert isinstance(given, PlanAllocation)
    assert given.to_dict() == allocate(plan).to_dict()
    with_stats = parse_plan(raw_plan(statistics=True))
    assert plan_allocation(with_stats) == allocate(with_stats)
    with pytest.raises(InternalError, match="PlanAllocation"):
        plan_allocation(with_stats, allocate_counts(plan))


def test_the_moe_curve_of_a_plan_with_statistics_takes_the_plan_wide_allocator() -> None:
    plan = parse_plan(raw_plan(statistics=True))
    curve = moe_curves(plan, points=3, span=2.0, allocator=allocate)
    own = allocate(plan)
    for name in ("by_sex", "by_county"):  # the middle point is the plan's own total
        assert curve.moe[name][1] == pytest.approx(own.table(name).moe, rel=1e-6)
    counts_only = allocate(parse_plan(raw_plan(statistics=False)))
    assert curve.moe["by_sex"][1] > counts_only.table("by_sex").moe  # the statistic's share
