"""The Tables page's survey-weight form (issue 37.8): weight a count table by a column of
person weights (its cells become weighted totals), or make it a count table again."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dprelease.data.columns import number_columns
from dprelease.errors import DPReleaseError
from dprelease.plan.weight_edit import set_survey_weight
from ui.markdown import md_error
from ui.state import Workspace, parsed_table
from ui.table_forms import change_plan

NO_WEIGHT = "(none: counts)"
DEFAULT_BOUND = 1000


def weight_choices(ws: Workspace) -> list[str]:
    """Columns of numbers: the data's (first rows mostly numbers) that the plan does not
    declare categorical, then the plan's numeric columns; without data, the plan's only."""
    columns = {  # a column's kind as the parser reads it (a domain: categorical)
        name: column.get("kind", "categorical" if "domain" in column else "numeric")
        if isinstance(column, dict)
        else None
        for name, column in ws.plan.get("columns", {}).items()
    }
    declared = [name for name, kind in columns.items() if kind == "numeric"]
    found = number_columns(parsed_table(ws)) if ws.upload is not None else []
    found = [name for name in found if columns.get(name, "numeric") == "numeric"]
    return list(dict.fromkeys([*found, *declared]))


def survey_weight_form(ws: Workspace, tables: list[dict[str, Any]]) -> None:
    names = [str(t.get("name")) for t in tables if "stat" not in t and not t.get("invariant")]
    if not names:
        return
    with st.form("survey_weight_form"):
        st.markdown("**Survey weight** (weighted totals instead of counts)")
        left, middle, right = st.columns([2, 2, 1])
        table = left.selectbox("Table", names, key="weight_table")
        column = middle.selectbox(
            "Weight column (numbers)", [NO_WEIGHT, *weight_choices(ws)], key="weight_column"
        )
        bound = right.number_input(
            "Largest weight W", min_value=1, value=DEFAULT_BOUND, step=1, key="weight_bound"
        )
        st.caption(
            "Each row counts with its weight, clamped into [0, W] and rounded to a whole number "
            "(a missing weight counts 0). One person can move a cell by W, so the table's noise "
            "is W times a count table's: choose the smallest W that holds nearly all weights."
        )
        if st.form_submit_button("Set survey weight"):
            chosen = None if column == NO_WEIGHT else column
            try:
                change_plan(ws, set_survey_weight(ws.plan, table, chosen, float(bound)))
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))
