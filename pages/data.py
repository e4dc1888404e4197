"""Data: choose the data set, declare each column's public domain, the privacy unit, and
load or save the whole plan."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import streamlit as st

from dprelease.accounting.accountants.registry import check_plan as check_accounting
from dprelease.data.coverage import domain_coverage
from dprelease.data.read import read_data
from dprelease.errors import DPReleaseError
from dprelease.limits import MAX_CELLS, MAX_ROWS_PER_UNIT
from dprelease.plan.edit import empty_plan, ignore_column, set_unit
from dprelease.plan.model import default_of
from dprelease.plan.parse import loads_plan, plan_format, plan_to_dict
from dprelease.plan.table_spec import Unit
from dprelease.plan.yaml_text import plan_yaml
from ui.column_editor import column_editor
from ui.markdown import md, md_error, static_table
from ui.plan_without_data import column_names, no_data_section, plan_with_data_name
from ui.state import Upload, parsed_table, reset_to_sample, sample_plan_dict, workspace
from ui.synced import synced

ws = workspace()
st.title("1 · Data")
st.write(
    "Pick the confidential data set and declare, for each column you want to publish, its "
    "**public domain**: the list of values (or bins) every released table will have a cell "
    "for, whatever the data hold. Domains come from you, not from the data, so that the "
    "release does not reveal which values occur."
)

# --- the data set ---------------------------------------------------------------------------
upload_key = (
    "data_upload" if ws.memo.uploader_version == 0 else f"data_upload_{ws.memo.uploader_version}"
)
left, right = st.columns([3, 1])
with left:
    uploaded = st.file_uploader(
        "Upload a data file (CSV, Parquet or Excel)",
        type=["csv", "tsv", "txt", "parquet", "xlsx"],
        key=upload_key,  # a new key after a refused file empties the uploader
        help="Checked against the upload limit before it is read. It stays in this browser "
        "session only, never on the server's disk.",
    )
    st.caption(
        "Larger data (over the 200 MB upload limit, up to a national census): make the plan "
        "here without data, save it, and count where the data live with "
        "`dprelease release plan.yaml --data DATA --engine duckdb` (or "
        "`--engine spark --spark-master URL` on a cluster). This page never reads a path "
        "typed into it."
    )
with right:
    st.write("")
    sample_loaded = ws.upload is not None and ws.upload.is_sample
    if st.button("Use the bundled sample", key="use_sample", disabled=sample_loaded):
        reset_to_sample(ws)
        st.rerun()
    if st.button(
        "Plan without data",
        key="no_data",
        disabled=ws.upload is None,
        help="Declare columns by name or from a codebook CSV, weigh the budget and save the "
        "plan; release later where the data live.",
    ):
        if ws.upload is not None and ws.upload.is_sample and ws.plan == sample_plan_dict():
            ws.plan = empty_plan()
        ws.set_data(None)
        st.rerun()

if uploaded is not None and ws.memo.upload_id != uploaded.file_id:
    ws.memo.upload_id = uploaded.file_id
    data = uploaded.getvalue()
    try:
        read = read_data(data, filename=uploaded.name)
    except DPReleaseError as error:
        kept = "The previous data set is still loaded." if ws.upload else "No data are loaded."
        ws.memo.upload_error = md_error(error, kept)
        ws.memo.uploader_version += 1  # the refused file leaves the uploader
        st.rerun()
    else:
        from_sample = ws.upload is not None and ws.upload.is_sample
        ws.set_data(Upload.of(uploaded.name, data), read)
        untouched_sample = ws.plan == sample_plan_dict()
        unrelated = not set(ws.plan.get("columns", {})) & set(read.column_names)
        if untouched_sample or (from_sample and unrelated):
            ws.plan = empty_plan()  # a new data set starts from a clean plan
        ws.memo.flash = f"Loaded {md(uploaded.name)}: {read.num_columns} columns."
        st.rerun()  # so the budget meter in the sidebar shows the new data set

if ws.memo.upload_error is not None:
    st.error(ws.memo.upload_error)
    ws.memo.upload_error = None
if ws.memo.flash is not None:
    st.success(ws.memo.flash)
    ws.memo.flash = None

table: pa.Table | None = None  # the parsed upload; None for a plan without data
if ws.upload is not None:
    try:
        table = parsed_table(ws)
    except DPReleaseError as error:
        st.error(md(error))
        st.stop()
    source = "the bundled synthetic sample" if ws.upload.is_sample else "your upload"
    st.caption(f"Data: **{md(ws.upload.name)}** ({source}), {table.num_columns} columns.")
    with st.expander("First rows — confidential, shown to you only", expanded=False):
        static_table(table.slice(0, 10).to_pandas())  # static: nothing to download
else:
    no_data_section(ws)

# --- the plan file --------------------------------------------------------------------------
st.subheader("Plan file")
st.write("Load a plan saved earlier (or made for the command line), or save this one.")
load_col, yaml_col, json_col = st.columns([2, 1, 1])
with load_col:
    plan_file = st.file_uploader(
        "Load a plan (YAML or JSON)", type=["yaml", "yml", "json"], key="plan_upload"
    )
if plan_file is not None and ws.memo.plan_id != plan_file.file_id:
    ws.memo.plan_id = plan_file.file_id
    try:
        text = plan_file.getvalue().decode("utf-8-sig")
        fmt = plan_format(Path(plan_file.name))
        parsed = loads_plan(text, fmt, max_cells=MAX_CELLS)
        check_accounting(parsed)  # the accountant and what it rules, as the CLI refuses them
        loaded = plan_to_dict(parsed)
    except UnicodeDecodeError:
        st.error("The plan file is not UTF-8 text; save it as UTF-8. Your plan is unchanged.")
    except DPReleaseError as error:
        st.error(md_error(error, "Your plan is unchanged."))
    else:
        loaded.pop("data", None)  # the data are whatever this page holds
        ws.plan = loaded
        ws.memo.flash = f"Loaded the plan from {md(plan_file.name)}."
        st.rerun()  # so the sidebar shows the loaded plan's figures at once
plan_now = plan_with_data_name(ws)  # written out only when a button is clicked
yaml_col.download_button(
    "Save plan (YAML)",
    lambda: plan_yaml(plan_now),
    file_name="plan.yaml",
    key="save_yaml",
    mime="application/yaml",
)
json_col.download_button(
    "Save plan (JSON)",
    lambda: json.dumps(plan_now, indent=2, ensure_ascii=False) + "\n",
    file_name="plan.json",
    key="save_json",
    mime="application/json",
)

# --- the privacy unit -----------------------------------------------------------------------
st.subheader("Privacy unit")
BY_ROW, BY_ID = "each row", "each person / household (an id column)"
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

# --- columns --------------------------------------------------------------------------------
st.subheader("Columns and their public domains")
declared = ws.plan.get("columns", {})
coverage = {}
if table is not None:
    try:
        coverage = domain_coverage(table, ws.plan)
    except DPReleaseError as error:
        st.warning(md_error(error, "Coverage is not shown until the declarations are valid."))
present = table.column_names if table is not None else column_names(ws)
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
