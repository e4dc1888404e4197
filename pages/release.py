"""Release: the one action that spends budget. Fresh secure noise, charged to the ledger
once, then the zip to download and the report."""

from __future__ import annotations

import streamlit as st

from dprelease.budget_text import cost_text
from ui.markdown import md_lines
from ui.release_action import release_action
from ui.release_ledger import ledger_section
from ui.release_view import code_download, session_releases, show_postprocess
from ui.state import current_allocation, require_upload, workspace
from ui.synthetic_switch import render_synthetic_switch, show_synthetic_problem


def render() -> None:
    ws = workspace()
    st.title("5 · Release")
    plan, allocation, problem = current_allocation(ws)
    if problem:
        st.error(md_lines(problem))
    if plan is None or allocation is None:
        session_releases(ws)
        st.stop()
    total = allocation.total
    st.markdown(
        f"**{len(allocation.tables)} tables**, {sum(t.cells for t in allocation.tables):,} "
        "cells, "
        + (f"**{len(allocation.statistics)} statistics**, " if allocation.statistics else "")
        + (f"{len(allocation.discoveries)} discovered domains, " if allocation.discoveries else "")
        + f"{allocation.accounting} accounting, {allocation.allocation} allocation: this "
        f"release costs **{cost_text(total.epsilon, total.delta)}** of the data set's lifetime "
        "budget."
    )
    show_postprocess(plan)
    render_synthetic_switch(ws, "release_synthetic")  # issue 27
    if not show_synthetic_problem(plan):
        session_releases(ws)
        st.stop()
    code_download(ws)  # issue 24: the release as code
    if ws.upload is None:
        session_releases(ws)
    require_upload(ws)  # a plan without data: say where to release it, and stop
    account = ledger_section(ws, plan)
    release_action(ws, plan, allocation, account)
    session_releases(ws)


render()
