"""Local DP: when each respondent randomises their own answer, which protocol, how many
people, and what it costs against central DP; then a CONFIDENTIAL simulation on the data."""

from __future__ import annotations

import streamlit as st

from ui.ldp_heavy import render_heavy_hitters, render_itemsets
from ui.ldp_planner_view import ldp_inputs, ldp_plan_view, several_questions
from ui.ldp_simulation import simulation_section
from ui.state import current_plan, workspace


def render() -> None:
    ws = workspace()
    st.title("Local DP")
    st.write(
        "In a local-DP survey no one is trusted with the raw answers: each respondent randomises "
        "their own answer before it is sent. Pick ε and the question's domain to see which "
        "protocol is most accurate and how many respondents it needs compared with central DP."
    )
    plan, problem = current_plan(ws)
    columns = {c.name: c for c in plan.schema.columns} if plan is not None else {}
    epsilon, domain_size, n = ldp_inputs(columns)
    ldp_plan = ldp_plan_view(epsilon, domain_size, n)
    attributes = several_questions(columns, problem, epsilon, n)
    render_heavy_hitters(ws, float(epsilon))  # CONFIDENTIAL; these need data, not a plan
    render_itemsets(ws, float(epsilon))
    simulation_section(ws, columns, attributes, epsilon, ldp_plan.best)  # CONFIDENTIAL


render()
