"""The Data page's survey weights (issue 37): for each weight the plan's tables use, how many
rows have no weight and how many the clamp to the declared bounds moves. CONFIDENTIAL: the
data holder's own view, computed on each run from the upload (never cached, never exported)."""

from __future__ import annotations

import pyarrow as pa
import streamlit as st

from dprelease.data.coverage import weight_coverage
from dprelease.errors import DPReleaseError
from ui.markdown import md, md_error
from ui.state import Workspace


def survey_weight_report(ws: Workspace, table: pa.Table | None) -> None:
    """A line per survey weight of the plan, over this upload's rows; nothing without data or
    without a weighted table."""
    if table is None:
        return
    try:
        reports = weight_coverage(table, ws.plan)
    except DPReleaseError as error:
        st.warning(md_error(error, "The survey weights are not checked until this is mended."))
        return
    if not reports:
        return
    st.subheader("Survey weights")
    st.caption(
        "Confidential, for you only (never in a release): what the clamp to each weight's "
        "declared bounds does to the rows of this data, before any privacy-unit cap. A row "
        "with no weight counts 0 in the weighted tables; a weight outside the bounds counts "
        "as the nearest bound."
    )
    for report in reports:
        alert = st.warning if report.rows_missing or report.rows_clamped else st.success
        alert(md(report.line()))
