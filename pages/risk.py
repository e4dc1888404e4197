"""Risk: CONFIDENTIAL — the disclosure risk of the data holder's own data (k-anonymity,
l-diversity, t-closeness, attacks) and a reconstruction attack on exact vs DP tables."""

from __future__ import annotations

import streamlit as st

from dprelease.errors import DPReleaseError
from ui.graph_view import render_graph_section
from ui.markdown import md_error
from ui.risk_inputs import risk_choices
from ui.risk_reconstruct import reconstruction_section
from ui.risk_sections import attacks_section, generalisations_section, measures_section
from ui.state import current_plan, parsed_table, workspace


def render() -> None:
    ws = workspace()
    st.title("Risk")
    st.warning(
        "**CONFIDENTIAL — for your eyes only.** This page measures how identifiable the people "
        "in your own data are. Nothing here is part of a release, and nothing on it can be "
        "downloadable: static tables, charts without their save bar.",
        icon=":material/lock:",
    )
    render_graph_section()  # an edge list of its own: shown with or without tabular data
    try:
        table = parsed_table(ws)
    except DPReleaseError as error:
        st.error(md_error(error))
        st.stop()
    plan, plan_problem = current_plan(ws)
    choices = risk_choices(ws, list(table.column_names))
    data, report = measures_section(ws, table, plan, choices)
    attacks_section(ws, plan, choices, data, report)
    generalisations_section(table, plan, plan_problem, choices, data, report)
    reconstruction_section(ws, plan, plan_problem)


render()
