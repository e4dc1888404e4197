"""The Data page's "whole data dictionary" import (issue 37, point 7): one file (JSON, or a
long CSV column,value,label[,parent]) declares every column it names; the page shows what it
will set before anything changes, and applies it with one click."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from dprelease.data import formats
from dprelease.errors import DPReleaseError
from dprelease.plan.dictionary import read_dictionary
from ui.markdown import md, md_error
from ui.state import Workspace


def dictionary_import_section(ws: Workspace, present: Sequence[str]) -> None:
    with st.expander("Import a whole data dictionary (JSON or CSV)"):
        st.caption(
            "A published codebook declares every column at once: JSON "
            '`{"COLUMN": {"description": …, "values": {"CODE": "LABEL"}, "parent": …, '
            '"parents": {…}, "bins": […], "bin_labels": […]}}`, or a CSV with the header '
            "`column,value,label[,parent]`, one row per code. It is public metadata: columns "
            "take their codes from it as if you had typed them. You see what it sets first."
        )
        upload = st.file_uploader(
            "Data dictionary",
            type=[*formats.codebook_types(), "json"],  # a long CSV, or JSON
            key="dictionary_upload",
        )
        if upload is None:
            return
        try:
            book = read_dictionary(upload.getvalue(), upload.name)
        except DPReleaseError as error:
            st.error(md_error(error))
            return
        rows = book.preview(set(present))
        st.dataframe(rows, hide_index=True, key="dictionary_preview")
        applied = [r["column"] for r in rows if not r["note"]]
        if not applied:
            st.warning("None of the dictionary's columns is in the data; nothing to apply.")
            return
        label = f"Apply to {len(applied)} column(s): {', '.join(applied[:6])}" + (
            "…" if len(applied) > 6 else ""
        )
        if st.button(md(label), key="dictionary_apply"):
            try:
                ws.plan = book.apply(ws.plan, set(present))
            except DPReleaseError as error:
                st.error(md_error(error))
                return
            st.rerun()
