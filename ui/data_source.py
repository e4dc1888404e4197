"""The Data page's data set: upload a file (read and checked at once; a refused one leaves the
uploader and the data as they were), the bundled sample, or a plan without data; then the first
rows (CONFIDENTIAL, on this screen only)."""

from __future__ import annotations

import pyarrow as pa
import streamlit as st

from dprelease.data import formats
from dprelease.data.read import read_data
from dprelease.errors import DPReleaseError
from dprelease.plan.edit import empty_plan
from ui.declared_labels import labelled_count
from ui.markdown import md, md_error, static_table
from ui.plan_without_data import no_data_section
from ui.state import Upload, Workspace, parsed_table, reset_to_sample, sample_plan_dict


def data_source_section(ws: Workspace) -> pa.Table | None:
    """Draw the data set's inputs; return the parsed upload (None: a plan without data)."""
    upload_key = (
        "data_upload"
        if ws.memo.uploader_version == 0
        else f"data_upload_{ws.memo.uploader_version}"
    )
    left, right = st.columns([3, 1])
    with left:
        uploaded = st.file_uploader(
            f"Upload a data file ({formats.FORMAT_NAMES})",
            type=formats.upload_types(),
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
            labelled = labelled_count(ws)
            ws.memo.flash = f"Loaded {md(uploaded.name)}: {read.num_columns} columns." + (
                f" The file declares value labels for {labelled} columns: each column's editor "
                "offers them as its domain."
                if labelled
                else ""
            )
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
    return table
