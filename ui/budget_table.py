"""The Budget page's table: per-table budget, noise and margins of error, with lock toggles."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dprelease.accounting.allocation import Allocation
from dprelease.accounting.counted import union_tables
from dprelease.plan.edit import update_table
from dprelease.plan.model import Plan
from ui.state import Workspace


def budget_rows(allocation: Allocation) -> pd.DataFrame:
    """One row per table, the same numbers as `dprelease plan` prints."""
    confidence = f"{allocation.confidence:.0%}"
    return pd.DataFrame(
        [
            {
                "table": t.name,
                "locked": t.spec.locked,
                "columns": " × ".join(t.spec.by) or "(total)",
                "cells": t.cells,
                "mechanism": t.noise.mechanism,
                "ε": t.epsilon,
                "δ": t.delta,
                "ρ": t.rho,
                "noise std": t.noise.std,
                f"MoE per cell ({confidence})": t.moe,
                "MoE whole table": t.moe_table,
                "expected RMSE": t.expected_rmse,
                "measured": "yes" if t.measured_as else "derived",
            }
            for t in allocation.tables
        ]
    )


def measurement_rows(allocation: Allocation) -> pd.DataFrame:
    """What the release measures under strategy auto (the published tables derive from it)."""
    return pd.DataFrame(
        [
            {
                "measurement": m.name,
                "columns": " × ".join(m.spec.by) or "(total)",
                "cells": m.cells,
                "mechanism": m.noise.mechanism,
                "ε": m.epsilon,
                "ρ": m.rho,
                "noise std": m.noise.std,
            }
            for m in allocation.measurements
        ]
    )


# One format per column whatever the accountant: δ as 1.11e-09 (not 0.000000001), margins of
# error with one decimal under every mechanism (a discrete Gaussian's is a whole number, a
# discrete Laplace's is not), narrow numeric columns so the grid fits 1400 px.
_MOE = st.column_config.NumberColumn(format="%.1f", width="small")
# short headers where the cells are narrow (the keys stay: "MoE per cel…" was cut, issue 37.6)
_MOE_TABLE = st.column_config.NumberColumn("MoE table", format="%.1f", width="small")
NUMBER_FORMATS = {
    "cells": st.column_config.NumberColumn(format="%d", width="small"),
    "ε": st.column_config.NumberColumn(format="%.4g", width="small"),
    "δ": st.column_config.NumberColumn(format="%.3g", width="small"),
    "ρ": st.column_config.NumberColumn(format="%.4g", width="small"),
    "noise std": st.column_config.NumberColumn(format="%.3g", width="small"),
    "MoE whole table": _MOE_TABLE,
    "expected RMSE": st.column_config.NumberColumn(
        "RMSE", help="The expected root-mean-square error of a cell.", format="%.3g", width="small"
    ),
}


def budget_table(ws: Workspace, plan: Plan, allocation: Allocation) -> None:
    frame = budget_rows(allocation)
    confidence = f"{allocation.confidence:.0%}"
    edited = st.data_editor(
        frame,
        key="budget_table_" + "".join("1" if locked else "0" for locked in frame["locked"]),
        hide_index=True,
        # columns the accountant leaves empty (ε and δ per table under zCDP, ρ under pure)
        # are not shown, so the whole table fits a 1400 px window
        column_order=[c for c in frame.columns if not frame[c].isna().all()],
        # under strategy auto a published table has no budget of its own to lock
        disabled=[c for c in frame.columns if c != "locked" or allocation.derived],
        column_config={
            f"MoE per cell ({confidence})": st.column_config.NumberColumn(
                f"MoE/cell {confidence}",
                help=f"Half-width of each cell's {confidence} interval.",
                format="%.1f",
                width="small",
            ),
            "locked": st.column_config.CheckboxColumn(
                help="Lock a table at its current budget; the others share the rest.",
                width="small",
            ),
            **NUMBER_FORMATS,
        },
        width="stretch",
    )
    unit = allocation.accountant.unit
    for table, was, now in zip(allocation.tables, frame["locked"], edited["locked"], strict=True):
        if bool(was) != bool(now):
            value = getattr(table, unit) if now else None
            ws.plan = update_table(ws.plan, table.name, **allocation.accountant.lock_fields(value))
            st.rerun()


def union_note(plan: Plan, allocation: Allocation) -> str:
    """A sentence on the measurements no published table determines (unions, pure DP)."""
    union_bys = {spec.by for spec in union_tables(plan)}
    unions = [m.name for m in allocation.measurements if m.spec.by in union_bys]
    if not unions:
        return ""
    return (
        f" {', '.join(unions)} {'is a union' if len(unions) == 1 else 'are unions'} of two "
        "tables, measured once with both tables' ε: under pure DP that gives both less noise "
        "than measuring them apart."
    )
