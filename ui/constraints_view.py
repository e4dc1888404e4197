"""The dashboard's view of structural zeros and invariant tables (issue 27).

`render_structural_zeros` (Tables page): the plan's impossible cells, one to add, each to
remove. `show_invariants` (Budget page): which tables are published exact, in plain words.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.plan.constraints_edit import add_structural_zero, remove_structural_zero
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_schema
from dprelease.plan.schema import Schema, with_label
from dprelease.release.constraints_files import INVARIANT_NOTE, ZEROS_NOTE
from ui.markdown import md, md_error
from ui.state import Workspace


def render_structural_zeros(ws: Workspace) -> None:
    """List the plan's structural zeros and let the user add or remove one."""
    zeros = list(ws.plan.get("structural_zeros") or [])
    with st.expander(f"Structural zeros ({len(zeros)})", expanded=bool(zeros)):
        st.caption(ZEROS_NOTE + " Example: age under 15 and marital status Married.")
        try:
            schema: Schema | None = parse_schema(ws.plan.get("columns", {}))
        except DPReleaseError:
            schema = None
        for index, zero in enumerate(zeros):
            text, remove = st.columns([5, 1])
            text.markdown(md(" and ".join(_cell_text(schema, c, v) for c, v in zero.items())))
            if remove.button("Remove", key=f"remove_zero_{index}"):
                ws.plan = remove_structural_zero(ws.plan, index)
                st.rerun()
        if schema is None:
            st.info("Declare the columns' domains on the Data page to add a structural zero.")
            return
        chosen = st.multiselect("Columns of the impossible cells", schema.names, key="zero_columns")
        picked = {
            name: st.multiselect(
                f"Values of {name}",
                list(schema[name].labels),
                format_func=partial(with_label, schema[name]),  # issue 37: labels, not codes
                key=f"zero_values_{name}",
            )
            for name in chosen
        }
        if st.button("Add structural zero", key="add_zero"):
            try:
                ws.plan = add_structural_zero(ws.plan, picked)
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))
            else:
                st.rerun()


def _cell_text(schema: Schema | None, column: str, values: list[object]) -> str:
    """A zero's condition for people: the values' declared labels where the plan gives some."""
    shown = [
        str(v)
        if schema is None or column not in schema.names
        else with_label(schema[column], str(v))
        for v in values
    ]
    return f"{column} in {', '.join(shown)}"


def show_invariants(plan: Plan) -> None:
    """The invariant tables beside the budget: exact, no noise, no budget (nothing when none)."""
    if not plan.invariants:
        return
    st.markdown("**Invariant tables: exact counts, outside the privacy guarantee**")
    st.dataframe(
        [
            {
                "table": spec.name,
                "by": " × ".join(spec.by) or "(total)",
                "cells": spec.cells(plan.schema),
                "mechanism": "none (exact)",
                "budget": "none",
                "MoE": 0,
            }
            for spec in plan.invariants
        ],
        key="invariant_tables",
        hide_index=True,
    )
    st.caption(INVARIANT_NOTE + " The ε above covers the other tables only.")
