"""Data: choose the data set, declare each column's public domain, the privacy unit, and
load or save the whole plan."""

from __future__ import annotations

import streamlit as st

from dprelease.data.coverage import domain_coverage
from dprelease.errors import DPReleaseError
from dprelease.plan.edit import ignore_column
from ui.column_editor import column_editor
from ui.data_source import data_source_section
from ui.dictionary_import import dictionary_import_section
from ui.markdown import md, md_error
from ui.plan_file import plan_file_section
from ui.plan_without_data import column_names
from ui.privacy_unit import privacy_unit_section
from ui.state import workspace
from ui.weight_report_view import survey_weight_report


def render() -> None:
    ws = workspace()
    st.title("1 · Data")
    st.write(
        "Pick the confidential data set and declare, for each column you want to publish, its "
        "**public domain**: the list of values (or bins) every released table will have a cell "
        "for, whatever the data hold. Domains come from you, not from the data, so that the "
        "release does not reveal which values occur."
    )
    table = data_source_section(ws)
    plan_file_section(ws)
    privacy_unit_section(ws, table)
    survey_weight_report(ws, table)
    st.subheader("Columns and their public domains")
    declared = ws.plan.get("columns", {})
    coverage = {}
    if table is not None:
        try:
            coverage = domain_coverage(table, ws.plan)
        except DPReleaseError as error:
            st.warning(md_error(error, "Coverage is not shown until the declarations are valid."))
    present = table.column_names if table is not None else column_names(ws)
    dictionary_import_section(ws, present)
    for name in [*present, *[n for n in declared if n not in present]]:
        column_editor(ws, table, name, coverage.get(name))

    extra = [n for n in declared if n not in present]
    if extra:
        st.warning(
            f"The plan declares columns that are not in the data: {', '.join(map(md, extra))}. "
            "Upload the matching data, or set them to ignore."
        )
        for name in extra:
            if st.button(f"Remove '{md(name)}' from the plan", key=f"drop_{name}"):
                ws.plan = ignore_column(ws.plan, name)
                st.rerun()


render()
