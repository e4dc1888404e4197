"""The Budget page's what-if knows a plan changed only in its budget by the plan's text but
the budget (`ui/state.py`), read off the plan's own text: equal for budget-only changes,
different for any other change."""

from __future__ import annotations

import json

from dprelease.plan.edit import set_budget, update_table
from ui.state import _without_budget, sample_plan_dict


def rest(plan: dict) -> str:
    return _without_budget(plan, json.dumps(plan, sort_keys=True))


def test_only_a_budget_change_keeps_the_text_but_the_budget():
    plan = sample_plan_dict()
    assert rest(set_budget(plan, epsilon=2.5, accounting="zcdp")) == rest(plan)
    assert rest(update_table(plan, plan["tables"][0]["name"], epsilon=0.1)) != rest(plan)
    assert rest({**plan, "dataset": "office"}) != rest(plan)
    moved = {**plan, "budget": {**plan["budget"], "epsilon": 3.0}}
    moved["tables"] = [*plan["tables"], {"name": "again", "by": ["sex"]}]
    assert rest(moved) != rest(plan)


def test_a_plan_without_a_budget_is_never_taken_for_one_with_it():
    plan = sample_plan_dict()
    without = {k: v for k, v in plan.items() if k != "budget"}
    assert rest(without) != rest(plan)  # another encoding: a miss, never a false match
    assert rest(without) == json.dumps(without, sort_keys=True)
