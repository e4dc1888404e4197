"""The Tables page's grid: every table's name, columns, statistic, cells, weight, lock and
target, edited in place and applied as plan edits (`dprelease.plan.edit.apply_table_edits`)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from dprelease.accounting.accountants.registry import lock_unit as unit_of_locks
from dprelease.errors import DPReleaseError
from dprelease.plan.edit import apply_table_edits
from dprelease.plan.model import Budget, default_of
from dprelease.plan.size import table_cells
from dprelease.plan.statistic_edit import statistic_text
from dprelease.plan.table_spec import TableSpec
from dprelease.plan.weight_edit import weight_text
from ui.markdown import md_error, md_lines
from ui.state import Workspace, current_plan
from ui.table_forms import change_plan

INVARIANT = "invariant (exact, no noise)"  # the grid's key (`apply_table_edits` reads it)


def tables_grid(ws: Workspace, tables: list[dict[str, Any]]) -> None:
    _, problem = current_plan(ws)
    accounting = ws.plan.get("budget", {}).get("accounting", default_of(Budget, "accounting"))
    lock_unit = unit_of_locks(accounting)
    cells = table_cells(ws.plan)  # None: a column the plan does not declare
    frame = pd.DataFrame(
        [
            {
                "name": t.get("name", ""),
                "columns": " × ".join(t.get("by", [])) or "(total)",
                "statistic": statistic_text(t.get("stat")),
                "survey weight": weight_text(t.get("survey_weight")),  # issue 37.8
                "cells": math.nan if n is None else n,
                "weight": float(t.get("weight", default_of(TableSpec, "weight"))),
                f"locked {lock_unit}": t.get(lock_unit),
                "target MoE per cell": (t.get("target") or {}).get("moe"),
                "target MoE whole table": (t.get("target") or {}).get("moe_table"),
                INVARIANT: bool(t.get("invariant", False)),
                "remove": False,
            }
            for t, n in zip(tables, cells, strict=True)
        ]
    )
    st.markdown(f"**{len(tables)} tables, {int(frame['cells'].sum(skipna=True)):,} cells in all**")
    st.caption(
        "Edit names, weights (used by weighted and optimal allocation), locked budgets and "
        "accuracy targets (used by targets allocation), or tick remove; then apply. An invariant "
        "table publishes its exact counts, without noise and outside the privacy guarantee."
    )
    edited = st.data_editor(
        frame,
        key="tables_editor",
        hide_index=True,
        disabled=["columns", "statistic", "survey weight", "cells"],
        # the invariant tick beside the name: at 1400 px the last columns are off screen
        column_order=[INVARIANT, *(c for c in frame.columns if c != INVARIANT)],
        column_config={
            INVARIANT: st.column_config.CheckboxColumn(
                "exact",
                help="Invariant: publish this table's exact counts, without noise and outside "
                "the privacy guarantee.",
                width="small",
            ),
            "name": st.column_config.TextColumn(pinned=True),
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
            change_plan(ws, apply_table_edits(ws.plan, rows, lock_unit))
        except DPReleaseError as error:
            st.error(md_error(error, "The plan is unchanged."))
    if problem:
        st.error(md_lines(problem))
