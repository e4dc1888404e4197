"""The sidebar of every page: the budget meter (total, allocated, spent, left) and the rows
the plan's tables and statistics leave out of the data (confidential, for the data holder's
screen only).

What follows from the plan alone (its total, the allocated ε, the page's leave guard) sits in
one slot that the Budget page's what-if fragment redraws (`redraw_plan_figures`): a fragment
rerun runs neither `app.py` nor this meter."""

from __future__ import annotations

import streamlit as st

from dprelease.budget_text import budget_text, optional_budget_text
from dprelease.errors import DPReleaseError
from ui.markdown import md
from ui.session import guard_script, keep_plan
from ui.state import (
    Workspace,
    coverage,
    current_allocation,
    ledger,
    ledger_account,
    workspace,
)
from ui.warm_up import warm_approx


def _fmt(value: float | None) -> str:
    return optional_budget_text(value)


def budget_meter() -> None:
    ws = workspace()
    with st.sidebar:
        st.markdown("### Privacy budget")
        if ws.upload is None:
            st.caption("Data: **none yet** (a plan without data)")
        else:
            source = "bundled sample" if ws.upload.is_sample else "your upload"
            st.caption(f"Data: **{md(ws.upload.name)}** ({source})")
        ws.memo.plan_slot = st.empty()
        _plan_figures(ws)
        warm_approx(ws.plan, first_only=True)  # issue 37.9: PLD code imported ahead
        if ws.upload is None:
            return
        _coverage_line(ws)
        try:
            book = ledger()
            account = ledger_account(ws, book)
            balance = account.balance()
        except DPReleaseError as error:
            st.error(md(error))
            return
        left = balance.left_epsilon
        first, second = st.columns(2)
        first.metric(
            "Spent ε",
            _fmt(balance.spent_epsilon),
            help=f"Released from this data set so far ({balance.releases} release(s)).",
        )
        second.metric(
            "Left ε",
            "∞" if left is None else budget_text(left, "down"),
            help="Lifetime cap minus the composed total of every release (∞: no cap set); set "
            "the cap on the Release page.",
        )
        if balance.cap_epsilon:
            composed_epsilon = balance.composed.epsilon
            st.progress(
                min(1.0, composed_epsilon / balance.cap_epsilon),
                text=f"{_fmt(composed_epsilon)} (composed) of the lifetime cap "
                f"{budget_text(balance.cap_epsilon, 'down')}",
            )


def _plan_figures(ws: Workspace) -> None:
    """The plan's total and what it allocates, why it could not be kept, and the guard."""
    _, allocation, _ = current_allocation(ws)
    total = ws.plan.get("budget", {}).get("epsilon")  # shown even while the plan is unfinished
    allocated = allocation.total.epsilon if allocation is not None else None
    with ws.memo.plan_slot.container():
        first, second = st.columns(2)
        first.metric("Total ε (plan)", _fmt(total), help="The budget the plan asks for.")
        second.metric(
            "Allocated ε", _fmt(allocated), help="What the tables compose to under the accountant."
        )
        if ws.memo.store_error:
            st.warning(md(ws.memo.store_error))
        guard_script(ws)


def redraw_plan_figures(ws: Workspace) -> None:
    """At the end of the Budget page's fragment: keep the plan on the server (as `app.py` does
    after a full run) and redraw the sidebar's slot. It is redrawn on every run of the
    fragment, the full run's too: Streamlit shows a fragment's writes to an outside container
    only if the fragment wrote there in the full run."""
    keep_plan(ws)
    if ws.memo.plan_slot is not None:
        _plan_figures(ws)


def _coverage_line(ws: Workspace) -> None:
    """Rows left out of any table or statistic: confidential, shown to the data holder only."""
    figures = coverage(ws)
    if figures is None:
        return
    text = (
        f"Rows left out of some table or statistic: **{figures.rows_left_out:,}** of "
        f"{figures.rows:,} ({figures.share_left_out:.1%}; confidential, yours only)"
    )
    if figures.needs_confirmation():
        names = ", ".join(md(name) for name in figures.lossy_columns)
        st.warning(
            f"{text}. Columns: {names}. Check their domains on the Data page, and a "
            "statistic's column for missing values or text such as N."
        )
    else:
        st.caption(text)
