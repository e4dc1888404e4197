"""The Data page's privacy unit: each row, or each person/household by an id column with at
most so many rows per id (`dprelease.plan.edit.set_unit`; the widgets follow the plan)."""

from __future__ import annotations

import pyarrow as pa
import streamlit as st

from dprelease.limits import MAX_ROWS_PER_UNIT
from dprelease.plan.edit import set_unit
from dprelease.plan.model import default_of
from dprelease.plan.table_spec import Unit
from ui.plan_without_data import column_names
from ui.state import Workspace
from ui.synced import synced

BY_ROW, BY_ID = "each row", "each person / household (an id column)"


def privacy_unit_section(ws: Workspace, table: pa.Table | None) -> None:
    st.subheader("Privacy unit")
    unit = ws.plan.get("unit", {"kind": "row"})
    names = table.column_names if table is not None else column_names(ws)
    current = unit.get("column")
    if current is not None and current not in names:
        names = [current, *names]  # the plan's id column, even if the data lack it: never swapped
    default_rows = int(default_of(Unit, "max_rows"))

    def _on_unit() -> None:
        """The user's choice into the plan (the widgets follow the plan: `ui.synced`)."""
        if st.session_state["unit_kind"] == BY_ROW:
            ws.plan = set_unit(ws.plan, None)
        elif names:
            column = st.session_state.get("unit_column", current if current in names else names[0])
            rows = st.session_state.get("unit_max_rows", unit.get("max_rows", default_rows))
            ws.plan = set_unit(ws.plan, column, int(rows))

    synced("unit_kind", BY_ID if unit.get("kind") == "id" else BY_ROW)
    st.radio(
        "What does the guarantee protect?",
        [BY_ROW, BY_ID],
        key="unit_kind",
        on_change=_on_unit,
        horizontal=True,
    )
    if unit.get("kind") == "id":
        id_col, cap_col = st.columns(2)
        synced("unit_column", current)
        id_col.selectbox("Id column", names, key="unit_column", on_change=_on_unit)
        synced("unit_max_rows", int(unit.get("max_rows", default_rows)))
        cap_col.number_input(
            "At most this many rows per id (extra rows are dropped at random)",
            min_value=1,
            max_value=MAX_ROWS_PER_UNIT,
            key="unit_max_rows",
            on_change=_on_unit,
        )
