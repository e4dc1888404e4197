"""The Data page's editor for one column: kind, public domain or bins, other label, parent."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pyarrow as pa
import streamlit as st

from dprelease.data import formats
from dprelease.data.columns import float_values
from dprelease.data.domains import domain_from_data
from dprelease.data.report import ColumnReport
from dprelease.errors import DPReleaseError, quote
from dprelease.plan.codebook_csv import read_codebook
from dprelease.plan.edit import (
    bins_from_data,
    check_column,
    ignore_column,
    kept_labels,
    labels_text,
    parse_domain_text,
    parse_edges,
    parse_labels_text,
    set_categorical,
    set_numeric,
)
from dprelease.plan.schema import COLUMN_KINDS
from dprelease.plan.statistic_edit import discover_of, set_discovered
from ui.declared_labels import declared_labels_section
from ui.markdown import md, md_error
from ui.state import Workspace

KINDS = ("ignore", *COLUMN_KINDS)  # "ignore": not in the plan (the dashboard's own choice)
_LEAK_WARNING = (
    "Taking the domain from the data reveals which values occur (a rare category shows that "
    "someone has it). The release metadata will say the domain came from the data."
)


_SOURCES = {"data": ", domain from data", "value_labels": ", domain from the file's value labels"}


def _version(declaration: dict[str, Any] | None) -> str:
    """Widget keys change with the declaration, so a loaded plan refreshes the inputs."""
    text = json.dumps(declaration, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _summary(declaration: dict[str, Any] | None) -> str:
    if declaration is None:
        return "not released"
    if declaration.get("kind") == "numeric":
        bins = declaration.get("bins")
        count = len(bins) - 1 if isinstance(bins, list) else "equal-width"
        labelled = ", labelled" if declaration.get("labels") else ""
        return f"numeric, {count} bins{labelled}"
    discovered = discover_of(declaration)
    if discovered is not None:  # issue 16
        return f"categorical, domain discovered privately at release (min_count {discovered})"
    size = len(declaration.get("domain", []))
    parent = f", within {md(declaration['parent'])}" if declaration.get("parent") else ""
    source = _SOURCES.get(declaration.get("domain_source", ""), "")
    labelled = f", {len(declaration['labels'])} labelled" if declaration.get("labels") else ""
    return f"categorical, {size} values{labelled}{parent}{source}"


def _coverage_line(report: ColumnReport | None) -> str | None:
    if report is None or report.rows == 0:
        return None
    parts = [f"{report.rows_in_domain / report.rows:.1%} of rows in the domain"]
    if report.rows_to_other:
        parts.append(f"{report.rows_to_other:,} rows sent to the other label")
    if report.rows_left_out:
        parts.append(f"{report.rows_left_out:,} rows outside the domain (left out)")
    if report.rows_clamped:
        parts.append(f"{report.rows_clamped:,} values clamped into the end bins")
    return "Confidential coverage: " + "; ".join(parts) + "."


def column_editor(
    ws: Workspace, table: pa.Table | None, name: str, report: ColumnReport | None
) -> None:
    """One column's editor; `table` is None for a plan without data (no fill from data)."""
    declaration = ws.plan.get("columns", {}).get(name)
    version = _version(declaration)
    editing = ws.memo.editing_column == name
    with st.expander(f"**{md(name)}** — {_summary(declaration)}", expanded=editing):
        current = declaration.get("kind", "categorical") if declaration else "ignore"
        kind = st.selectbox(
            "Kind",
            KINDS,
            index=KINDS.index(current),
            key=f"kind_{name}_{version}",
            on_change=_keep_open,
            args=(ws, name),  # keep this column open while it is edited
            help="categorical: a list of values; numeric: bins; ignore: not released.",
        )
        line = _coverage_line(report)
        if line:
            st.caption(line)
        if kind == "ignore":
            if declaration is not None:
                ws.plan = ignore_column(ws.plan, name)
                st.rerun()
            st.caption("Not released. Tables using it were removed.")
            return
        if kind == "categorical":
            declared_labels_section(ws, name, version)  # a Stata/SPSS file's value labels
            public = current == kind and discover_of(declaration) is None
            _categorical_form(ws, name, declaration if public else None, version)
        else:
            _numeric_form(ws, name, declaration if current == kind else None, version)
        if kind == "categorical":  # the safe choice, offered before filling from the data
            _discover_form(ws, name, discover_of(declaration), version)
        if table is not None and name in table.column_names:
            _fill_from_data(ws, table, name, kind, version)


def _discover_form(ws: Workspace, name: str, min_count: int | None, version: str) -> None:
    """No public domain? Discover it privately: values whose noisy count passes a threshold."""
    with st.form(key=f"discover_form_{name}_{version}"):
        st.markdown(
            "**No public domain?** Discover it privately at release: only values whose noisy "
            "count reaches a threshold are released, charged to the budget ((ε, δ)-DP; not "
            "under pure accounting)."
        )
        chosen = st.number_input(
            "Release values with at least this many rows (min_count)",
            min_value=1,
            value=min_count or 20,
            step=1,
            key=f"min_count_{name}_{version}",
        )
        if st.form_submit_button("Discover the domain privately"):
            try:
                new_plan = set_discovered(ws.plan, name, int(chosen))
            except DPReleaseError as error:
                st.error(f"{md(error)} Nothing was changed.")
                return
            _apply(ws, new_plan, name)


def _keep_open(ws: Workspace, name: str) -> None:
    ws.memo.editing_column = name


def _apply(ws: Workspace, new_plan: dict[str, Any], name: str) -> None:
    ws.plan = new_plan
    _keep_open(ws, name)
    st.rerun()


def _categorical_form(
    ws: Workspace, name: str, declaration: dict[str, Any] | None, version: str
) -> None:
    declaration = declaration or {}
    from_data = _from_data_note(declaration)
    others = [
        n for n, c in ws.plan.get("columns", {}).items() if n != name and c.get("kind") != "numeric"
    ]
    with st.form(key=f"cat_form_{name}_{version}"):
        domain_text = st.text_area(
            "Public domain: one value per line (order = order in the tables)",
            "\n".join(str(v) for v in declaration.get("domain", [])),
            key=f"domain_{name}_{version}",
            height=150,
        )
        codebook = st.file_uploader(
            "…or import a codebook CSV (first column = values; optional `label` and `parent` "
            "columns)",
            type=formats.codebook_types(),
            key=f"codebook_{name}_{version}",
        )
        labels_before = labels_text(declaration.get("labels"))
        typed_labels = st.text_area(
            "Labels (optional, public): one `code = label` per line; tables and charts show "
            "'label (code)' and the released CSVs add a column with the label",
            labels_before,
            key=f"labels_{name}_{version}",
            height=100,
        )
        other = st.text_input(
            "'Other' label (values outside the domain are counted here; leave empty to "
            "leave them out)",
            str(declaration.get("other", "")),
            key=f"other_{name}_{version}",
        )
        parent_options = ["(none)", *others]
        parent_now = declaration.get("parent")
        parent = st.selectbox(
            "Hierarchy parent (e.g. county within state); the map comes from a codebook's "
            "`parent` column",
            parent_options,
            index=parent_options.index(parent_now) if parent_now in parent_options else 0,
            key=f"parent_{name}_{version}",
        )
        if not st.form_submit_button("Apply domain"):
            return
    try:
        parent_map = declaration.get("parent_map")
        labels = parse_labels_text(typed_labels)
        if codebook is not None:
            book = read_codebook(codebook.getvalue())
            domain, parent_map = book.values, book.parents or parent_map
            labels = book.labels or labels
        else:
            domain = parse_domain_text(domain_text)
        if typed_labels == labels_before or codebook is not None:
            labels = kept_labels(labels, domain)  # a new domain keeps the labels it still has
        chosen_parent = None if parent == "(none)" else parent
        if chosen_parent and not parent_map:
            raise DPReleaseError(
                f"Column {quote(name)}: a parent needs a codebook with a column named parent "
                "(each code's parent code); import one, or choose (none)."
            )
        other_value = parse_domain_text(other)[0] if other.strip() else None
        new_plan = set_categorical(
            ws.plan,
            name,
            domain,
            other=other_value,
            parent=chosen_parent,
            parent_map=parent_map if chosen_parent else None,
            labels=labels,
            from_data=from_data,
        )
        check_column(new_plan, name)
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was changed."))
        return
    _apply(ws, new_plan, name)


def _from_data_note(declaration: dict[str, Any]) -> bool:
    """Whether the declaration came from the data; if so, say that editing it keeps the mark.

    An edited domain still starts from what the data showed, so it stays `domain_source:
    data` (the safe direction); set the column to ignore to start afresh.
    """
    from_data = declaration.get("domain_source") == "data"
    if from_data:
        st.caption(
            "This domain was filled from the data; after any edit the release still says so "
            "(set the kind to ignore to start again from a public list)."
        )
    return from_data


def _numeric_form(
    ws: Workspace, name: str, declaration: dict[str, Any] | None, version: str
) -> None:
    bins = (declaration or {}).get("bins")
    ranged = isinstance(bins, dict)
    from_data = _from_data_note(declaration or {})
    with st.form(key=f"num_form_{name}_{version}"):
        style = st.radio(
            "Bins",
            ["edges", "start / stop / width"],
            index=1 if ranged else 0,
            key=f"bin_style_{name}_{version}",
            horizontal=True,
        )
        edges = st.text_input(
            "Edges (each bin is [a, b); the last one includes its end)",
            ", ".join(str(e) for e in bins) if isinstance(bins, list) else "",
            key=f"edges_{name}_{version}",
            placeholder="0, 18, 25, 35, 45, 55, 65, 120",
        )
        start_col, stop_col, width_col = st.columns(3)
        preset = bins if isinstance(bins, dict) else {}
        start = start_col.number_input(
            "start", value=float(preset.get("start", 0)), key=f"start_{name}_{version}"
        )
        stop = stop_col.number_input(
            "stop", value=float(preset.get("stop", 100)), key=f"stop_{name}_{version}"
        )
        width = width_col.number_input(
            "width", value=float(preset.get("width", 10)), key=f"width_{name}_{version}"
        )
        typed_labels = st.text_area(
            "Bin labels (optional): one per line, in bin order, e.g. 0–17 for [0, 18)",
            "\n".join((declaration or {}).get("labels") or []),
            key=f"bin_labels_{name}_{version}",
        )
        if not st.form_submit_button("Apply bins"):
            return
    try:
        new_bins: list[int | float] | dict[str, float] = (
            parse_edges(edges)
            if style == "edges"
            else {"start": start, "stop": stop, "width": width}
        )
        labels = [line.strip() for line in typed_labels.splitlines() if line.strip()]
        new_plan = set_numeric(ws.plan, name, new_bins, labels=labels, from_data=from_data)
        check_column(new_plan, name)
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was changed."))
        return
    _apply(ws, new_plan, name)


def _fill_from_data(ws: Workspace, table: pa.Table, name: str, kind: str, version: str) -> None:
    agree = st.checkbox(
        "Fill the domain from the data (I understand this leaks which values occur)",
        key=f"leak_ok_{name}_{version}",
        help=_LEAK_WARNING,
    )
    if not agree:
        return
    st.warning(_LEAK_WARNING)
    if not st.button("Fill from data", key=f"fill_{name}_{version}"):
        return
    try:
        if kind == "categorical":
            new_plan = set_categorical(
                ws.plan, name, domain_from_data(table.column(name), name), from_data=True
            )
        else:
            values = float_values(table.column(name), name)
            new_plan = set_numeric(ws.plan, name, bins_from_data(values, name), from_data=True)
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was changed."))
        return
    _apply(ws, new_plan, name)
