"""The Tables page's forms: add a table, quick-add every 1- or 2-way table of some columns, add
a statistic (issue 16). Each edit goes through `dprelease.plan.edit` / `plan.statistic_edit`;
a refused one leaves the plan unchanged and says why."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.plan.edit import add_every_k_way, add_table
from dprelease.plan.statistic_edit import KINDS as STAT_KINDS
from dprelease.plan.statistic_edit import METHOD_CHOICES, add_statistic
from ui.markdown import md_error
from ui.state import Workspace


def change_plan(ws: Workspace, new_plan: dict[str, Any]) -> None:
    """Keep an edited plan and draw the page again with it."""
    ws.plan = new_plan
    st.rerun()


def add_table_form(ws: Workspace, columns: list[str]) -> None:
    with st.form("add_table_form", clear_on_submit=True):
        st.markdown("**Add a table**")
        pick, name_col = st.columns([3, 1])
        by = pick.multiselect("Columns (none = the total count)", columns, key="new_table_by")
        name = name_col.text_input("Name (optional)", key="new_table_name")
        if st.form_submit_button("Add table"):
            try:
                change_plan(ws, add_table(ws.plan, by, name.strip() or None))
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))


def quick_add_form(ws: Workspace, columns: list[str]) -> None:
    with st.form("quick_add_form"):
        st.markdown("**Quick add**")
        kept = [c for c in ws.memo.quick_columns if c in columns]  # the last choice, between visits
        chosen = st.multiselect(
            "Columns", columns, default=kept or columns[: min(4, len(columns))], key="quick_columns"
        )
        one, two = st.columns(2)
        every_one = one.form_submit_button("Every 1-way table of these")
        every_two = two.form_submit_button("Every 2-way table of these")
        if every_one or every_two:
            ws.memo.quick_columns = list(chosen)
            try:
                change_plan(ws, add_every_k_way(ws.plan, chosen, 1 if every_one else 2))
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))


def add_statistic_form(ws: Workspace, columns: list[str]) -> None:
    with st.form("add_statistic_form", clear_on_submit=True):  # issue 16
        st.markdown("**Add a statistic** (a median, quantiles, a sum or a mean in each cell)")
        left, middle, right = st.columns([2, 1, 2])
        stat_by = left.multiselect("Per cell of (none = overall)", columns, key="new_stat_by")
        stat_kind = middle.selectbox("Kind", STAT_KINDS, key="new_stat_kind")
        stat_column = right.text_input("Data column (numbers)", key="new_stat_column")
        low, high, qs, how = st.columns(4)
        stat_lo = low.number_input("Lower bound", value=0.0, key="new_stat_lo")
        stat_hi = high.number_input("Upper bound", value=100.0, key="new_stat_hi")
        stat_qs = qs.text_input("Quantiles (kind quantile)", "0.5", key="new_stat_quantiles")
        stat_method = how.selectbox("Method", METHOD_CHOICES, key="new_stat_method")
        st.caption(
            "Values outside the bounds are clamped into them. How much clamping changes a "
            "statistic depends on the data and is unknown to this page and to every margin of "
            "error: choose bounds that hold nearly all values."
        )
        if st.form_submit_button("Add statistic"):
            try:
                change_plan(
                    ws,
                    add_statistic(
                        ws.plan,
                        stat_by,
                        stat_kind,
                        stat_column,
                        (stat_lo, stat_hi),
                        quantiles=stat_qs,
                        method=stat_method,
                    ),
                )
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))
