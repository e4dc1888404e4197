"""The Data page's use of the labels a Stata, SPSS or SAS upload declares (issue 36): a
column's variable label as a caption, and its value labels offered as the public domain and
labels (`domain_source: value_labels`: the producer's codebook, not values found in the data).
"""

from __future__ import annotations

import streamlit as st

from dprelease.data.formats.declared import DeclaredMetadata, declared_metadata
from dprelease.errors import DPReleaseError
from dprelease.plan.edit import check_column, set_categorical
from ui.markdown import md, md_error
from ui.state import Workspace

_HELP = (
    "The codes and labels the file's producer declared (its value labels), read from the "
    "file's header, not from its records: public like a printed codebook. Check them first: "
    "labels a program made from the data (Stata's `encode`) list the values that occur."
)


def declared_for(ws: Workspace) -> DeclaredMetadata | None:
    """The upload's declared labels (None: a format without them), read once per upload."""
    upload = ws.upload
    if upload is None or upload.is_sample:
        return None
    if ws.memo.declared is None or ws.memo.declared[0] != upload.sha256:
        try:
            found = declared_metadata(upload.data, upload.name)
        except DPReleaseError:
            found = None  # the Data page already shows why the file cannot be read
        ws.memo.declared = (upload.sha256, found)
    declared: DeclaredMetadata | None = ws.memo.declared[1]
    return declared


def labelled_count(ws: Workspace) -> int:
    declared = declared_for(ws)
    return 0 if declared is None else len(declared.codebooks)


def declared_labels_section(ws: Workspace, name: str, version: str) -> None:
    """A column's declared variable label, and a button that takes its value labels."""
    declared = declared_for(ws)
    if declared is None:
        return
    label = declared.variable_labels.get(name)
    if label:
        st.caption(f"Variable label declared in the file: {md(label)}")
    book = declared.codebook(name)
    if book is None:
        return
    if not st.button(
        f"Use the file's value labels as the domain ({len(book.domain)} codes)",
        key=f"value_labels_{name}_{version}",
        help=_HELP,
    ):
        return
    try:
        new_plan = set_categorical(
            ws.plan, name, list(book.domain), labels=dict(book.labels), from_value_labels=True
        )
        check_column(new_plan, name)
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was changed."))
        return
    ws.plan = new_plan
    ws.memo.editing_column = name  # keep this column open
    st.rerun()
