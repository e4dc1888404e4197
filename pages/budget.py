"""Budget: how much privacy to spend, how it is composed and split, and what it buys.

Everything below the introduction is one fragment: a what-if (ε typed, a switch of accountant,
split or strategy) reruns only it, not `app.py`, the sidebar's ledger look-up or the page's
introduction, and then redraws the sidebar's plan figures itself. The tabs run lazily: only the
open one is computed and sent."""

from __future__ import annotations

import streamlit as st

from dprelease.budget_text import budget_text
from dprelease.plan.model import Plan
from dprelease.stats.allocation import PlanAllocation
from ui.budget_inputs import budget_inputs
from ui.budget_table import budget_table, measurement_rows, union_note
from ui.budget_tabs import budget_tabs
from ui.constraints_view import show_invariants
from ui.delivery import ship_now
from ui.epsilon_risk import epsilon_risk
from ui.markdown import md, md_lines
from ui.sidebar import redraw_plan_figures
from ui.state import Workspace, current_allocation, workspace
from ui.statistics_view import show_statistics_budget
from ui.warm_up import warm_approx


@st.fragment
def what_if(ws: Workspace) -> None:
    try:
        _inputs_and_results(ws)
    finally:  # also after an st.rerun(): the sidebar shows the plan as it now is
        redraw_plan_figures(ws)


def _inputs_and_results(ws: Workspace) -> None:
    # The inputs are drawn above the total but sent after it: each message leaves the server
    # only when the script thread hands over the GIL (up to 5 ms a message while it computes),
    # so the total, sent first, reaches the browser before the 20 messages of the inputs.
    # (Their callbacks have already run: the plan read below is the new one.)
    inputs = st.container()
    plan, allocation, problem = current_allocation(ws)
    _results(ws, plan, allocation, problem)  # an st.rerun() in it (a lock) skips the rest
    with inputs:
        budget_inputs(ws)


def _results(
    ws: Workspace, plan: Plan | None, allocation: PlanAllocation | None, problem: str | None
) -> None:
    if problem:
        st.error(md_lines(problem))
    if plan is None or allocation is None:
        return
    for note in allocation.advice:  # from the plan alone; advice from the row count is on Preview
        st.warning(md(note))
    total = allocation.total
    summary = f"The whole release is **ε = {budget_text(total.epsilon)}**"
    if total.delta:
        summary += f" at **δ = {budget_text(total.delta)}**"
    if total.rho is not None:
        summary += f" (ρ = {budget_text(total.rho)} under zCDP)"
    st.markdown(
        summary + f", composed by {allocation.accountant.composition_text(total.composition)}."
    )
    ship_now()  # the total is what a what-if waits for: to the browser before the table
    epsilon_risk(total.epsilon, total.delta)
    if allocation.accountant_choice is not None:
        st.info(md(f"accounting: auto — {allocation.accountant_choice.summary()}"))
    budget_table(ws, plan, allocation)
    show_invariants(plan)  # issue 27: the tables published exact, outside the guarantee
    if allocation.derived:
        count = len(allocation.measurements)
        st.caption(
            f"strategy: auto measures {count} marginal{'s' if count != 1 else ''} and derives "
            f"all {len(allocation.tables)} published tables from them by least squares "
            "('derived' tables cost no budget of their own); 'expected RMSE' is each published "
            "table's exact per-cell error before post-processing. Locks and equal/weighted "
            "splits measure the tables as listed (strategy: workload)."
            + union_note(plan, allocation)
        )
        with st.expander("What the release measures", expanded=False):
            st.dataframe(measurement_rows(allocation), key="measurement_table", hide_index=True)
    show_statistics_budget(ws, plan, allocation)  # issue 16; a quantile's resolution box
    budget_tabs(ws, plan, allocation)


def render() -> None:
    ws = workspace()
    st.title("3 · Budget")
    st.write(
        "ε (epsilon) bounds how much any one person's data can change what is published: "
        "smaller is more private and noisier. Nothing here touches the data: the noise and "
        "margins of error follow from the plan alone. (Advice that needs your data's size is on "
        "the Preview page, which is confidential.)"
    )
    what_if(ws)
    warm_approx(ws.plan)  # issue 37.9: a switch to approx at this ε finds its certificate


render()
