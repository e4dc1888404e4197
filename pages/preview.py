"""Preview: for the data holder's eyes only — noisy against true, before and after
post-processing. A preview is never exported; the release draws fresh noise."""

from __future__ import annotations

import streamlit as st

from dprelease.accounting.allocation import delta_advice
from dprelease.accounting.tradeoffs import typical_cell_advice
from dprelease.errors import DPReleaseError
from dprelease.plan.edit import set_postprocess
from dprelease.plan.model import Postprocess
from dprelease.release.draw import draw_preview
from dprelease.release.metrics import error_metrics
from dprelease.release.statistics import upload_inputs
from ui.markdown import md, md_lines, static_table
from ui.preview_charts import table_chart
from ui.state import current_allocation, require_upload, workspace
from ui.statistics_view import show_preview_statistics
from ui.synthetic_switch import (
    render_synthetic_switch,
    show_preview_microdata,
    show_synthetic_problem,
)

PREVIEW_SIMULATIONS = 10  # enough for a stable picture, a few seconds at most
SCROLL_AFTER = 720  # pixels: a taller chart (31 PUMAs, 3,143 counties) scrolls in a frame
ws = workspace()
st.title("4 · Preview")
st.warning(
    "**PREVIEW — confidential, for your eyes only.** It compares noisy tables with the true "
    "ones, so nothing on this page can be downloaded. The release draws fresh noise.",
    icon=":material/lock:",
)

# --- post-processing switches (they are part of the plan) -----------------------------------
written = ws.plan.get("postprocess", {})
post = {**Postprocess().to_dict(), **written}  # what the plan leaves out: the model's defaults
st.subheader("Post-processing")
st.caption(
    "Applied to the noisy counts in a fixed order; it reads only the noisy measurements, so "
    "it costs no privacy."
)
switches = st.columns(4)
consistent = switches[0].toggle(
    "Consistent tables",
    value=bool(post["consistent"]),
    key="pp_consistent",
    help="Shared sub-tables agree and children add up to parents (weighted least squares).",
)
nonnegative = switches[1].toggle(
    "No negative counts", value=bool(post["nonnegative"]), key="pp_nonnegative"
)
integer = switches[2].toggle("Whole numbers", value=bool(post["integer"]), key="pp_integer")
clamp_on = switches[3].toggle(
    "Clamp to bounds",
    value=any(v is not None for v in post["clamp"]),
    key="pp_clamp",
)
clamp: list[float | None] = [None, None]
if clamp_on:
    low_col, high_col = st.columns(2)
    lower, upper = [*(post.get("clamp") or []), None, None][:2]
    texts = (
        low_col.text_input(
            "Lower bound (empty = none)", "" if lower is None else f"{lower:g}", key="pp_lower"
        ),
        high_col.text_input(
            "Upper bound (empty = none)", "" if upper is None else f"{upper:g}", key="pp_upper"
        ),
    )
    try:
        clamp = [float(t) if t.strip() else None for t in texts]
    except ValueError:
        st.error("Clamp bounds must be numbers (or empty for no bound); they are unchanged.")
        clamp = [lower, upper]
wanted = {"consistent": consistent, "nonnegative": nonnegative, "integer": integer, "clamp": clamp}
if any(written.get(k) != v for k, v in wanted.items()):
    ws.plan = set_postprocess(ws.plan, **wanted)
render_synthetic_switch(ws, "pp_synthetic")  # issue 27

plan, allocation, problem = current_allocation(ws)
if problem:
    st.error(md_lines(problem))
if plan is None or allocation is None or not show_synthetic_problem(plan):
    st.stop()

upload = require_upload(ws)  # a plan without data: say where to release it, and stop

# --- advice that needs the true row count: it stays here, never on a public page -----------
rows = ws.table.num_rows if ws.table is not None else 0
size_advice = [*delta_advice(plan.budget.delta, rows), *typical_cell_advice(allocation, rows)]
if rows and size_advice:
    st.subheader("Advice from your data's size (confidential)")
    st.caption(
        "These notes use the true number of rows, which the release never states; keep them "
        "to yourself like the rest of this page."
    )
    for note in size_advice:
        st.warning(md(note))

if st.button("Draw a preview", key="draw_preview", type="primary"):
    try:
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
names = [t.name for t in preview.tables]
if not names:
    st.stop()
chosen = st.selectbox("Table", names, key="preview_table")
table = next(t for t in preview.tables if t.name == chosen)
true_counts = preview.true_counts.counts[chosen]
raw = error_metrics(true_counts, table.noisy_counts, table.budget.moe)
done = error_metrics(true_counts, table.released_counts, table.budget.moe)
static_table(  # a static table: no download button on a preview
    [
        {
            "": "noisy measurement",
            "MAE": raw.mae,
            "RMSE": raw.rmse,
            "largest error": raw.max_abs,
            "cells off by more than the MoE": f"{raw.share_beyond_moe:.1%}",
        },
        {
            "": "after post-processing",
            "MAE": done.mae,
            "RMSE": done.rmse,
            "largest error": done.max_abs,
            "cells off by more than the MoE": f"{done.share_beyond_moe:.1%}",
        },
    ],
)
st.caption(
    f"Margin of error per cell: ±{table.budget.moe:.3g} at {preview.allocation.confidence:.0%} "
    "confidence, so about "
    f"{1 - preview.allocation.confidence:.0%} of cells are expected beyond it. Steps applied: "
    + (", ".join(preview.steps_applied) or "none")
    + (f"; not available: {', '.join(preview.steps_skipped)}" if preview.steps_skipped else "")
)
accuracy = preview.accuracy.get(chosen)
if accuracy is not None:
    st.markdown(
        "**Expected accuracy, simulated from this preview's noisy measurements** (confidential: "
        "the preview's noise is not charged to the budget, so these figures must not leave "
        "this page; the release's report gives the same figures from its own, charged noise)"
    )
    static_table(
        [
            {
                "": "noisy measurement",
                "RMSE per cell": accuracy.rmse_raw,
                "bias per cell": accuracy.bias_raw,
            },
            {
                "": "after post-processing",
                "RMSE per cell": accuracy.rmse_postprocessed,
                "bias per cell": accuracy.bias_postprocessed,
            },
        ]
    )
    st.caption(
        f"{accuracy.simulations} simulated releases. Consistency lowers the error; "
        "non-negativity adds a small upward bias on small cells."
    )
# No mode bar: its "download as PNG" would let a picture of true counts leave the tool.
figure = table_chart(preview, chosen)
tall = (figure.layout.height or 0) > SCROLL_AFTER  # a long domain scrolls inside the page
with st.container(height=SCROLL_AFTER if tall else "content", border=False):
    st.plotly_chart(figure, key="preview_chart", config={"displayModeBar": False})
