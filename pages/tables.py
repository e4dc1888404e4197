"""Tables: the histograms and multi-way marginals to release."""

from __future__ import annotations

import streamlit as st

from ui.constraints_view import render_structural_zeros
from ui.dpml_view import render_model_form
from ui.state import workspace
from ui.survey_weight_form import survey_weight_form
from ui.table_forms import add_statistic_form, add_table_form, change_plan, quick_add_form
from ui.tables_grid import tables_grid


def render() -> None:
    ws = workspace()
    st.title("2 · Tables")
    st.write(
        "Each table counts the rows in every combination of its columns' domain values: one "
        "column gives a histogram, several give a marginal (a cross-tabulation), none gives the "
        "total. Every table you add shares the budget, so more tables and more cells mean more "
        "noise in each."
    )
    columns = list(ws.plan.get("columns", {}))
    if not columns:
        st.info("No column has a domain yet: declare some on the Data page first.")
        st.stop()
    add_table_form(ws, columns)
    quick_add_form(ws, columns)
    add_statistic_form(ws, columns)  # issue 16
    render_model_form(ws.plan, lambda plan: change_plan(ws, plan))  # issue 28.4
    tables = ws.plan.get("tables", [])
    if not tables:
        st.info("No tables yet: add one above.")
        st.stop()
    tables_grid(ws, tables)
    survey_weight_form(ws, tables)  # issue 37.8
    render_structural_zeros(ws)  # issue 27


render()
