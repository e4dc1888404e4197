"""The Budget page's what-if (issue 13's < 100 ms target): lazy tabs, the allocations a session
keeps for the last few plans.

AppTest always reruns the whole script, and its element tree loses the sidebar after a page
switch (fragment or not), so the fragment itself (a what-if reruns only it, and it redraws the
sidebar's figures and the leave guard, and keeps the plan) is checked in a real browser:
tests/browser/test_budget_whatif.py."""

from __future__ import annotations

import pytest

from dprelease.accounting.allocation import allocate
from dprelease.limits import MAX_CELLS
from dprelease.plan.parse import parse_plan
from helpers.app import budget_tab, go, open_app, workspace
from ui.budget_tabs import TABS
from ui.state import RECENT_PLANS


def _what_if(app, epsilon: str):
    app.text_input(key="epsilon_box").set_value(epsilon).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def _shown_table(app):
    return next(e.value for e in app.dataframe if "MoE whole table" in e.value.columns)


def test_a_what_if_on_the_first_tab_computes_and_sends_no_other_tab():
    app = _what_if(go(open_app(), "pages/budget.py"), "2.5")
    assert [c.key for c in app.get("plotly_chart")] == ["split_chart"]
    assert workspace(app).memo.curve is None  # the 14 re-allocations were not made
    budget_tab(app, "Margin of error vs ε")
    assert [c.key for c in app.get("plotly_chart")] == ["curve_chart"]
    assert workspace(app).memo.curve is not None


CHARTS = {  # what each tab draws on the sample plan (pure wins at ε = 1: no ε-against-δ curve)
    "Budget split": ["split_chart"],
    "Margin of error vs ε": ["curve_chart"],
    "Accountants": ["accountant_chart"],
    "Scenarios": [],  # none until a scenario is saved
}


@pytest.mark.parametrize("title", TABS)
def test_every_tab_opens_on_its_own_and_draws_only_itself(title):
    app = budget_tab(go(open_app(), "pages/budget.py"), title)
    assert not app.error, [e.value for e in app.error]
    assert [c.key for c in app.get("plotly_chart")] == CHARTS[title]
    assert any(b.key == "save_scenario" for b in app.button) == (title == "Scenarios")


def test_going_back_to_an_earlier_total_reuses_its_allocation_with_the_same_numbers():
    app = _what_if(go(open_app(), "pages/budget.py"), "2")
    first = workspace(app).memo.checked.copy()
    key = list(first)[-1]  # the plan at ε = 2, the most recent
    shown = _shown_table(app)
    _what_if(app, "3")
    _what_if(app, "2")
    again = workspace(app).memo.checked
    assert again[key] is first[key]  # reused, not allocated again
    assert list(again)[-1] == key  # now the most recent
    # the same figures as a fresh allocation of the same plan (what `plan --json` prints)
    fresh = allocate(parse_plan(workspace(app).plan, max_cells=MAX_CELLS))
    moe_column = next(c for c in shown.columns if c.startswith("MoE per cell"))
    assert list(_shown_table(app)[moe_column]) == [t.moe for t in fresh.tables]
    assert list(shown[moe_column]) == [t.moe for t in fresh.tables]
    assert workspace(app).memo.checked[key][1].total == fresh.total


def test_a_session_keeps_the_allocations_of_a_few_plans_only():
    app = go(open_app(), "pages/budget.py")
    for k in range(RECENT_PLANS + 3):
        _what_if(app, f"{1 + k / 4:g}")
    assert len(workspace(app).memo.checked) == RECENT_PLANS


def test_a_what_if_parses_only_the_budget_and_keeps_the_schema_object():
    """A new ε keeps the parsed columns (their digest keys the allocation's caches) and gives
    the plan and figures a full parse of the same plan gives; any other edit parses again,
    even one made in place."""
    app = _what_if(go(open_app(), "pages/budget.py"), "2")
    before = workspace(app).memo.parsed[1]
    _what_if(app, "2.7")
    plan = workspace(app).memo.parsed[1]
    assert plan.schema is before.schema and plan.budget.epsilon == 2.7
    fresh = parse_plan(workspace(app).plan, max_cells=MAX_CELLS)
    assert plan == fresh
    assert workspace(app).memo.checked[list(workspace(app).memo.checked)[-1]][1].total == (
        allocate(fresh).total
    )
    workspace(app).plan["tables"].append({"name": "sex_again", "by": ["sex"]})  # in place
    app.run()
    parsed = workspace(app).memo.parsed[1]  # seen by text: parsed again, the table in it
    assert parsed.schema is not before.schema and parsed.tables[-1].name == "sex_again"
