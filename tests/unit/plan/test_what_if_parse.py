"""A budget what-if parses only the budget (`with_budget`), and `set_budget` copies only the
budget: the same plan and the same problems as a full parse, without re-reading the columns."""

from __future__ import annotations

import copy

import pytest

from dprelease.errors import PlanError
from dprelease.plan.edit import set_budget
from dprelease.plan.parse import parse_plan, with_budget
from helpers.plans import plan_dict


@pytest.mark.parametrize(
    "changes",
    [
        {"epsilon": 2.5},
        {"accounting": "zcdp", "delta": 1e-9},
        {"accounting": "approx", "delta": 1e-8, "confidence": 0.9},
        {"allocation": "equal", "strategy": "workload"},
        {"epsilon": None, "rho": 0.02, "accounting": "zcdp"},
    ],
)
def test_a_budget_change_gives_the_full_parse_and_keeps_the_schema_object(changes):
    raw = plan_dict()
    plan = parse_plan(raw)
    changed = set_budget(raw, **changes)
    grafted = with_budget(plan, changed)
    assert grafted == parse_plan(changed)
    assert grafted.schema is plan.schema  # its cached digest keys the allocation's caches


@pytest.mark.parametrize("changes", [{"epsilon": -1.0}, {"epsilon": "one"}, {"confidence": 2.0}])
def test_a_bad_budget_reports_what_a_full_parse_reports(changes):
    raw = plan_dict()
    changed = set_budget(raw, **changes)
    with pytest.raises(PlanError) as full:
        parse_plan(changed)
    with pytest.raises(PlanError) as grafted:
        with_budget(parse_plan(raw), changed)
    assert grafted.value.problems == full.value.problems


def test_set_budget_copies_the_budget_and_shares_the_rest_unchanged():
    raw = plan_dict()
    before = copy.deepcopy(raw)
    changed = set_budget(raw, epsilon=3.0, delta=None)
    assert raw == before  # the old plan is untouched
    assert changed["budget"] == {
        k: v for k, v in {**raw["budget"], "epsilon": 3.0}.items() if k != "delta"
    }
    assert all(changed[key] is raw[key] for key in raw if key != "budget")
