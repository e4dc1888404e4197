"""Issue 37.9: what keeps a what-if light. The budget split is drawn as shares, so an ε change
that keeps the split sends the very same figure (the browser then skips redrawing it), with
margins fixed from its labels (no automargin passes); a switch to approx is allocated ahead
in the background, once per plan text, exactly as the switch makes it."""

from __future__ import annotations

import copy
import threading

import pytest

from dprelease.plan.edit import set_budget
from dprelease.plan.parse import parse_plan
from dprelease.stats.allocation import allocate
from ui import warm_up
from ui.budget_inputs import accounting_changes
from ui.charts import budget_split


def small_plan() -> dict:
    return {
        "version": 1,
        "columns": {
            "sex": {"kind": "categorical", "domain": ["F", "M"]},
            "age": {"kind": "numeric", "bins": [0, 18, 65, 120]},
            "region": {"kind": "categorical", "domain": ["north", "south", "east"]},
        },
        "tables": [
            {"name": "sex_by_age", "by": ["sex", "age"]},
            {"name": "region", "by": ["region"]},
            {"name": "total", "by": []},
        ],
        "budget": {"epsilon": 1.0, "accounting": "auto", "strategy": "auto"},
    }


def test_the_split_chart_is_the_same_figure_for_every_epsilon_of_one_split():
    plan = set_budget(small_plan(), accounting="pure", strategy="workload")
    figures = [
        budget_split(allocate(parse_plan(set_budget(plan, epsilon=epsilon))))
        for epsilon in (1.5, 2.5)
    ]
    assert figures[0].to_json() == figures[1].to_json()
    shares = figures[0].data[0].y
    assert sum(shares) == pytest.approx(100, abs=0.05) and min(shares) > 0
    layout = figures[0].layout
    assert layout.xaxis.automargin is False and layout.yaxis.automargin is False
    assert "share of the ε" in layout.title.text


def test_a_locked_table_moves_the_split_and_so_the_figure():
    plan = set_budget(small_plan(), allocation="equal", strategy="workload")
    locked = copy.deepcopy(plan)
    locked["tables"][0]["epsilon"] = 0.5
    figures = [budget_split(allocate(parse_plan(p))) for p in (plan, locked)]
    assert figures[0].to_json() != figures[1].to_json()


def test_the_switch_changes_are_those_the_warm_up_allocates():
    assert accounting_changes({"epsilon": 2.0}, "approx") == {
        "accounting": "approx",
        "delta": 1e-10,
    }
    assert accounting_changes({"rho": 0.1, "accounting": "zcdp"}, "pure") == {
        "accounting": "pure",
        "rho": None,
        "epsilon": 1.0,
    }


def test_warm_up_runs_once_per_plan_text_and_never_for_an_approx_plan(monkeypatch):
    calls: list[dict] = []
    done = threading.Event()

    def record(plan):  # type: ignore[no-untyped-def]
        calls.append(plan)
        warm_up._running.clear()
        done.set()

    monkeypatch.setattr(warm_up, "_allocate", record)
    monkeypatch.setattr(warm_up, "_warmed", set())
    plan = set_budget(small_plan(), epsilon=1.7)
    warm_up.warm_approx(plan)
    assert done.wait(5)
    warm_up.warm_approx(plan)  # the same text: not again
    warm_up.warm_approx(plan, first_only=True)  # something is warmed already
    warm_up.warm_approx(set_budget(plan, accounting="approx", delta=1e-9))
    assert len(calls) == 1
    assert calls[0]["budget"]["accounting"] == "approx" and calls[0]["budget"]["delta"] == 1e-10
    assert plan["budget"].get("accounting") != "approx"  # the session's plan is untouched
