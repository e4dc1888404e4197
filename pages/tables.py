"""Tables: the histograms and multi-way marginals to release."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.plan.edit import add_every_k_way, add_table, apply_table_edits
from dprelease.plan.model import Budget, default_of
from dprelease.plan.size import table_cells
from dprelease.plan.statistic_edit import KINDS as STAT_KINDS
from dprelease.plan.statistic_edit import add_statistic, statistic_text
from dprelease.plan.table_spec import TableSpec
from ui.markdown import md_error, md_lines
from ui.state import current_plan, workspace

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


def _change(new_plan: dict[str, object]) -> None:
    ws.plan = new_plan
    st.rerun()


with st.form("add_table_form", clear_on_submit=True):
    st.markdown("**Add a table**")
    pick, name_col = st.columns([3, 1])
    by = pick.multiselect("Columns (none = the total count)", columns, key="new_table_by")
    name = name_col.text_input("Name (optional)", key="new_table_name")
    if st.form_submit_button("Add table"):
        try:
            _change(add_table(ws.plan, by, name.strip() or None))
        except DPReleaseError as error:
            st.error(md_error(error, "The plan is unchanged."))

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
            _change(add_every_k_way(ws.plan, chosen, 1 if every_one else 2))
        except DPReleaseError as error:
            st.error(md_error(error, "The plan is unchanged."))

with st.form("add_statistic_form", clear_on_submit=True):  # issue 16
    st.markdown("**Add a statistic** (a median, quantiles, a sum or a mean in each cell)")
    left, middle, right = st.columns([2, 1, 2])
    stat_by = left.multiselect("Per cell of (none = overall)", columns, key="new_stat_by")
    stat_kind = middle.selectbox("Kind", STAT_KINDS, key="new_stat_kind")
    stat_column = right.text_input("Data column (numbers)", key="new_stat_column")
    low, high, qs = st.columns(3)
    stat_lo = low.number_input("Lower bound", value=0.0, key="new_stat_lo")
    stat_hi = high.number_input("Upper bound", value=100.0, key="new_stat_hi")
    stat_qs = qs.text_input("Quantiles (kind quantile)", "0.5", key="new_stat_quantiles")
    st.caption(
        "Values outside the bounds are clamped into them. How much clamping changes a "
        "statistic depends on the data and is unknown to this page and to every margin of "
        "error: choose bounds that hold nearly all values."
    )
    if st.form_submit_button("Add statistic"):
        try:
            _change(
                add_statistic(
                    ws.plan, stat_by, stat_kind, stat_column, (stat_lo, stat_hi), quantiles=stat_qs
                )
            )
        except DPReleaseError as error:
            st.error(md_error(error, "The plan is unchanged."))

tables = ws.plan.get("tables", [])
if not tables:
    st.info("No tables yet: add one above.")
    st.stop()

_, problem = current_plan(ws)
accounting = ws.plan.get("budget", {}).get("accounting", default_of(Budget, "accounting"))
lock_unit = "rho" if accounting == "zcdp" else "epsilon"
cells = table_cells(ws.plan)  # None: a column the plan does not declare
frame = pd.DataFrame(
    [
        {
            "name": t.get("name", ""),
            "columns": " × ".join(t.get("by", [])) or "(total)",
            "statistic": statistic_text(t.get("stat")),
            "cells": math.nan if n is None else n,
            "weight": float(t.get("weight", default_of(TableSpec, "weight"))),
            f"locked {lock_unit}": t.get(lock_unit),
            "target MoE per cell": (t.get("target") or {}).get("moe"),
            "target MoE whole table": (t.get("target") or {}).get("moe_table"),
            "remove": False,
        }
        for t, n in zip(tables, cells, strict=True)
    ]
)
st.markdown(f"**{len(tables)} tables, {int(frame['cells'].sum(skipna=True)):,} cells in all**")
st.caption(
    "Edit names, weights (used by weighted and optimal allocation), locked budgets and "
    "accuracy targets (used by targets allocation), or tick remove; then apply."
)
edited = st.data_editor(
    frame,
    key="tables_editor",
    hide_index=True,
    disabled=["columns", "statistic", "cells"],
    column_config={
        "cells": st.column_config.NumberColumn(format="%d"),
        "weight": st.column_config.NumberColumn(min_value=0.0, step=0.5),
        f"locked {lock_unit}": st.column_config.NumberColumn(min_value=0.0, format="%.6g"),
        "target MoE per cell": st.column_config.NumberColumn(min_value=0.0),
        "target MoE whole table": st.column_config.NumberColumn(min_value=0.0),
    },
    width="stretch",
)
if st.button("Apply changes", key="apply_tables", type="primary"):
    try:
        rows = [{str(k): v for k, v in row.items()} for row in edited.to_dict("records")]
        _change(apply_table_edits(ws.plan, rows, lock_unit))
    except DPReleaseError as error:
        st.error(md_error(error, "The plan is unchanged."))
if problem:
    st.error(md_lines(problem))
