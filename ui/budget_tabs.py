"""The Budget page's tabs: the split, margin of error against ε, the accountants, scenarios.

The tabs run lazily (`on_change="rerun"`): only the open tab is computed and sent, so an ε
what-if on the first tab neither re-allocates the curve, nor composes three accountants, nor
re-allocates every saved scenario, and the browser redraws one chart instead of five.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import streamlit as st

from dprelease.accounting.tradeoffs import (
    MoeCurve,
    compare_accountants,
    compare_scenarios,
    epsilon_delta_curve,
    moe_curves,
)
from dprelease.errors import DPReleaseError
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_plan
from dprelease.stats.allocation import PlanAllocation, allocate
from ui import charts
from ui.budget_table import NUMBER_FORMATS
from ui.markdown import md
from ui.state import Workspace

TABS = ("Budget split", "Margin of error vs ε", "Accountants", "Scenarios")
TAB_KEY = "budget_tab"


def budget_tabs(ws: Workspace, plan: Plan, allocation: PlanAllocation) -> None:
    split_tab, curve_tab, accountant_tab, scenario_tab = st.tabs(
        list(TABS), key=TAB_KEY, on_change="rerun"
    )
    if split_tab.open:
        with split_tab:
            st.plotly_chart(charts.budget_split(allocation), key="split_chart")
    if curve_tab.open:
        with curve_tab:
            st.plotly_chart(charts.moe_against_budget(_curve(ws, plan)), key="curve_chart")
            st.caption(
                "Each line is one table; the dashed line marks your budget. Doubling ε roughly "
                "halves the margin of error under pure accounting."
            )
    if accountant_tab.open:
        with accountant_tab:
            _accountants(plan, allocation)
    if scenario_tab.open:
        with scenario_tab:
            _scenarios(ws, allocation)


def _curve(ws: Workspace, plan: Plan) -> MoeCurve:
    """The plan re-allocated at 14 totals around its own. Keyed by the plan without its total,
    an ε what-if reuses it (only the marker moves) while ε stays inside the grid."""
    shape_key = json.dumps(
        {**ws.plan, "budget": {**ws.plan.get("budget", {}), "epsilon": None, "rho": None}},
        sort_keys=True,
        default=str,
    )
    unit, current = plan.budget.total_field, float(plan.budget.total)
    remembered = ws.memo.curve
    if (
        remembered is not None
        and remembered[0] == shape_key
        and remembered[1].unit == unit
        and remembered[1].budgets[1] <= current <= remembered[1].budgets[-2]
    ):
        return replace(remembered[1], current=current)
    with st.spinner("Re-allocating the plan across budgets…"):
        curve = moe_curves(plan, allocator=allocate)
    ws.memo.curve = (shape_key, curve)  # only the current plan's curve is kept
    return curve


def _accountants(plan: Plan, allocation: PlanAllocation) -> None:
    delta = plan.budget.delta or 1e-10
    bounds = compare_accountants(allocation, delta)
    if allocation.statistics or allocation.discoveries:  # issue 16
        st.caption(
            "This comparison composes the count tables' noise only; the statistics and "
            "discovered domains are composed as the plan's accountant says (total above)."
        )
    st.plotly_chart(charts.accountants(bounds, plan.budget.accounting), key="accountant_chart")
    st.dataframe(
        [{"accountant": b.accountant, "ε": b.epsilon, "δ": b.delta, "how": b.note} for b in bounds],
        key="accountant_table",
        hide_index=True,
        column_config=NUMBER_FORMATS,  # δ as 1.11e-09, as in the budget table
    )
    total = allocation.total
    if total.rho is not None:
        deltas = np.geomspace(1e-15, 1e-3, 40).tolist()
        st.plotly_chart(
            charts.epsilon_delta(deltas, epsilon_delta_curve(total.rho, deltas), delta),
            key="eps_delta_chart",
        )


def _scenarios(ws: Workspace, allocation: PlanAllocation) -> None:
    st.write(
        "Save the current settings as a scenario, change something (a weight, the "
        "accounting, ε) and compare. Loading a scenario restores its plan."
    )
    name_col, save_col = st.columns([3, 1])
    label = name_col.text_input(
        "Scenario name", value=f"scenario {len(ws.scenarios) + 1}", key="scenario_name"
    )
    if save_col.button("Save scenario", key="save_scenario"):
        ws.scenarios[label.strip() or f"scenario {len(ws.scenarios) + 1}"] = ws.plan
        st.rerun()
    if not ws.scenarios:
        return
    allocations = {}
    for name, saved in ws.scenarios.items():
        try:
            allocations[name] = allocate(parse_plan(saved))
        except DPReleaseError as error:
            st.warning(f"Scenario '{md(name)}' no longer allocates: {md(error)}")
    allocations["current"] = allocation
    comparison = compare_scenarios(allocations)
    st.dataframe(
        comparison,
        key="scenario_table",
        hide_index=True,  # one number format for every scenario, whatever its accountant
        column_config={n: st.column_config.NumberColumn(format="%.4g") for n in allocations},
    )
    st.plotly_chart(charts.scenarios(comparison, list(allocations)), key="scenario_chart")
    pick_col, load_col, drop_col = st.columns([2, 1, 1])
    picked = pick_col.selectbox("Scenario", list(ws.scenarios), key="scenario_pick")
    if load_col.button("Load it", key="load_scenario"):
        ws.plan = ws.scenarios[picked]
        st.rerun()
    if drop_col.button("Delete it", key="drop_scenario"):
        ws.scenarios.pop(picked, None)
        st.rerun()
