"""Preview: for the data holder's eyes only — noisy against true, before and after
post-processing. A preview is never exported; the release draws fresh noise."""

from __future__ import annotations

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.release.admitted import admit_preview
from dprelease.release.draw import draw_preview
from dprelease.release.preview_cost import PREVIEW_SIMULATIONS
from dprelease.release.sources import UploadData
from dprelease.release.statistics import upload_inputs
from ui.markdown import md, md_lines
from ui.postprocess_switches import postprocess_switches
from ui.preview_view import preview_table, size_advice
from ui.state import current_allocation, require_upload, workspace
from ui.statistics_view import show_preview_statistics
from ui.synthetic_switch import (
    render_synthetic_switch,
    show_preview_microdata,
    show_synthetic_problem,
)


def render() -> None:
    ws = workspace()
    st.title("4 · Preview")
    st.warning(
        "**PREVIEW — confidential, for your eyes only.** It compares noisy tables with the true "
        "ones, so nothing on this page can be downloaded. The release draws fresh noise.",
        icon=":material/lock:",
    )
    postprocess_switches(ws)  # they are part of the plan
    render_synthetic_switch(ws, "pp_synthetic")  # issue 27
    plan, allocation, problem = current_allocation(ws)
    if problem:
        st.error(md_lines(problem))
    if plan is None or allocation is None or not show_synthetic_problem(plan):
        st.stop()
    upload = require_upload(ws)  # a plan without data: say where to release it, and stop
    size_advice(ws, plan, allocation)
    if st.button("Draw a preview", key="draw_preview", type="primary"):
        try:
            # issue 35: admitted before the upload is counted or any noise is drawn
            admit_preview(plan, UploadData(upload.data, upload.name))
            with st.spinner("Counting and adding preview noise…"):
                counts, statistics = upload_inputs(upload.data, plan, upload.name)
                ws.preview = draw_preview(
                    plan,
                    counts,
                    allocation,
                    simulations=PREVIEW_SIMULATIONS,
                    statistics_source=statistics,
                )
        except DPReleaseError as error:
            st.error(f"{md(error)} Your plan and data are unchanged.")
    preview = ws.preview
    if preview is None:
        st.info("Click **Draw a preview** to see what the tables would look like with noise.")
        st.stop()
    if preview.plan != plan:
        st.info("The plan changed since this preview was drawn; draw again to see the new one.")
    show_preview_statistics(preview)  # issue 16: statistics and discovered domains
    show_preview_microdata(None if preview.microdata is None else preview.microdata.rows)
    preview_table(preview)


render()
