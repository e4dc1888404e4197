"""Budget: how much privacy to spend, how it is composed and split, and what it buys."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import streamlit as st

from dprelease.accounting.allocation import allocate
from dprelease.accounting.tradeoffs import (
    compare_accountants,
    compare_scenarios,
    epsilon_delta_curve,
    moe_curves,
)
from dprelease.errors import DPReleaseError
from dprelease.plan.parse import parse_plan
from ui import charts
from ui.budget_inputs import budget_inputs
from ui.budget_table import NUMBER_FORMATS, budget_table, measurement_rows
from ui.epsilon_risk import epsilon_risk
from ui.markdown import md, md_lines
from ui.state import current_allocation, workspace
from ui.statistics_view import show_statistics_budget

ws = workspace()
st.title("3 · Budget")
st.write(
    "ε (epsilon) bounds how much any one person's data can change what is published: smaller "
    "is more private and noisier. Nothing here touches the data: the noise and margins of "
    "error follow from the plan alone. (Advice that needs your data's size is on the Preview "
    "page, which is confidential.)"
)

budget_inputs(ws)
plan, allocation, problem = current_allocation(ws)
if problem:
    st.error(md_lines(problem))
if plan is None or allocation is None:
    st.stop()

for note in allocation.advice:  # from the plan alone; advice from the row count is on Preview
    st.warning(md(note))

total = allocation.total
summary = f"The whole release is **ε = {total.epsilon:.4g}**"
if total.delta:
    summary += f" at **δ = {total.delta:.1e}**"
if total.rho is not None:
    summary += f" (ρ = {total.rho:.4g} under zCDP)"
st.markdown(summary + f", composed by {total.composition} composition.")
epsilon_risk(total.epsilon, total.delta)
if allocation.accountant_choice is not None:
    st.info(md(f"accounting: auto — {allocation.accountant_choice.summary()}"))
budget_table(ws, plan, allocation)
if allocation.derived:
    st.caption(
        f"strategy: auto measures {len(allocation.measurements)} marginals and derives all "
        f"{len(allocation.tables)} published tables from them by least squares ('derived' "
        "tables cost no budget of their own); 'expected RMSE' is each published table's exact "
        "per-cell error before post-processing. Locks and equal/weighted splits measure the "
        "tables as listed (strategy: workload)."
    )
    with st.expander("What the release measures", expanded=False):
        st.dataframe(measurement_rows(allocation), key="measurement_table", hide_index=True)
show_statistics_budget(plan, allocation)  # issue 16

# --- charts ---------------------------------------------------------------------------------
split_tab, curve_tab, accountant_tab, scenario_tab = st.tabs(
    ["Budget split", "Margin of error vs ε", "Accountants", "Scenarios"]
)
with split_tab:
    st.plotly_chart(charts.budget_split(allocation), key="split_chart")
with curve_tab:
    # The curve re-allocates the plan at 14 totals around its own: keyed by the plan without
    # its total, an ε what-if reuses it (only the marker moves) while ε stays inside the grid.
    shape_key = json.dumps(
        {**ws.plan, "budget": {**ws.plan.get("budget", {}), "epsilon": None, "rho": None}},
        sort_keys=True,
        default=str,
    )
    unit = "rho" if plan.budget.rho is not None else "epsilon"
    current = float(getattr(plan.budget, unit) or 0.0)
    remembered = ws.memo.curve
    if (
        remembered is not None
        and remembered[0] == shape_key
        and remembered[1].unit == unit
        and remembered[1].budgets[1] <= current <= remembered[1].budgets[-2]
    ):
        curve = replace(remembered[1], current=current)
    else:
        with st.spinner("Re-allocating the plan across budgets…"):
            curve = moe_curves(plan)
        ws.memo.curve = (shape_key, curve)  # only the current plan's curve is kept
    st.plotly_chart(charts.moe_against_budget(curve), key="curve_chart")
    st.caption(
        "Each line is one table; the dashed line marks your budget. Doubling ε roughly "
        "halves the margin of error under pure accounting."
    )
with accountant_tab:
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
    if total.rho is not None:
        deltas = np.geomspace(1e-15, 1e-3, 40).tolist()
        st.plotly_chart(
            charts.epsilon_delta(deltas, epsilon_delta_curve(total.rho, deltas), delta),
            key="eps_delta_chart",
        )
with scenario_tab:
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
    if ws.scenarios:
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
