"""The Data page without data: columns declared by name or from a codebook CSV, so that a plan
is built, weighed and saved before (or without) any upload; the release then runs with the
command line where the data live. The saved plan names its data file (`data:`), never a path.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import streamlit as st

from dprelease.data import formats
from dprelease.errors import DPReleaseError, PlanError, quote
from dprelease.plan.codebook_csv import read_codebook
from dprelease.plan.edit import check_column, set_categorical
from dprelease.plan.schema import RESERVED_NAME
from ui.markdown import md, md_error
from ui.state import Workspace

MAX_NAME = 200
PARENT_KEY = "codebook_only_parent"
NO_PARENT = "(none)"


def column_names(ws: Workspace) -> list[str]:
    """The columns the page offers without data: those typed, then those the plan declares."""
    declared = list(ws.plan.get("columns", {}))
    return [*[n for n in ws.memo.typed_columns if n not in declared], *declared]


def plan_with_data_name(ws: Workspace) -> dict[str, Any]:
    """The plan as saved: with `data:` the uploaded file's name (a name, never a server path;
    the CLI reads it relative to the plan file), or the name a resumed plan was made for."""
    name = ws.upload.name if ws.upload is not None else ws.memo.wanted_data
    if not name:
        return ws.plan
    return {"version": ws.plan.get("version", 1), "data": name, **ws.plan}


def _check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise PlanError(
            f"Column name {quote(name)} is not allowed: give printable text of 1 to "
            f"{MAX_NAME} characters."
        )
    if name == RESERVED_NAME:
        raise PlanError(f"A column may not be called '{RESERVED_NAME}' (the count column).")
    return name


def _codebook_header(data: bytes) -> str:
    """The codebook's first header cell: the column's name in the data, as codebooks write it."""
    try:
        first = next(csv.reader(io.StringIO(data.decode("utf-8-sig"))), [""])
    except UnicodeDecodeError:
        raise PlanError("The codebook is not UTF-8 text; save it as a UTF-8 CSV.") from None
    return first[0].strip() if first else ""


def no_data_section(ws: Workspace) -> None:
    wanted = ws.memo.wanted_data
    st.info(
        (
            f"This plan was made for **{md(wanted)}**: upload it above to check the plan against "
            "it (the data are never kept on the server). "
            if wanted
            else "No data loaded. "
        )
        + "You can still build the plan: add columns by name or from a codebook CSV, declare "
        "their domains, add tables, weigh the budget and save the plan. Then release where "
        "the data live: `dprelease release plan.yaml --data DATA --engine auto`."
    )
    names_col, codebook_col = st.columns(2)
    with names_col, st.form("typed_columns_form", clear_on_submit=True):
        typed = st.text_input(
            "Column names (as in the data, separated by commas)",
            key="typed_columns",
            placeholder="STATE, PUMA, SEX, AGEP",
        )
        if st.form_submit_button("Add columns"):
            try:
                names = [_check_name(n) for n in typed.split(",") if n.strip()]
                if not names:
                    raise PlanError("Type at least one column name.")
            except DPReleaseError as error:
                st.error(md_error(error, "Nothing was changed."))
            else:
                ws.memo.typed_columns = list(dict.fromkeys([*ws.memo.typed_columns, *names]))
                st.rerun()
    with codebook_col, st.form("codebook_column_form"):
        codebook = st.file_uploader(
            "…or a column from a codebook CSV (first column = codes, its header = the column's "
            "name; optional `parent` column)",
            type=formats.codebook_types(),
            key="codebook_only",
        )
        parents = [
            n for n, c in ws.plan.get("columns", {}).items() if c.get("kind") == "categorical"
        ]
        if ws.memo.codebook_added:  # each column starts without a parent (before the box)
            st.session_state[PARENT_KEY] = NO_PARENT
            ws.memo.codebook_added = False
        parent = st.selectbox(
            "Its hierarchy parent (for a codebook with a parent column)",
            [NO_PARENT, *parents],
            key=PARENT_KEY,
        )
        if st.form_submit_button("Add the column") and codebook is not None:
            _add_codebook_column(ws, codebook.getvalue(), None if parent == NO_PARENT else parent)


def _add_codebook_column(ws: Workspace, data: bytes, parent: str | None) -> None:
    """The codebook's codes, labels and (with a parent chosen) parents, as one column."""
    try:
        name = _check_name(_codebook_header(data))
        book = read_codebook(data)
        if parent is not None and not book.parents:
            raise PlanError(
                f"Column {quote(name)}: the codebook has no parent column, so "
                f"{quote(parent)} cannot be its parent; choose (none), or add a column named "
                "parent that gives each code's parent code."
            )
        new_plan = set_categorical(
            ws.plan,
            name,
            book.values,
            parent=parent,
            parent_map=book.parents if parent is not None else None,
            labels=book.labels,
        )
        check_column(new_plan, name)
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was changed."))
        return
    ws.plan = new_plan
    ws.memo.codebook_added = True
    labelled = f" ({len(book.labels)} labelled)" if book.labels else ""
    ws.memo.flash = (
        f"Added column {md(name)} with {len(book.values)} codes{labelled} from the codebook."
    )
    st.rerun()
