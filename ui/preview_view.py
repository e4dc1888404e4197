"""The Preview page's confidential parts: advice from the data's true size, and one table's
errors, expected accuracy and chart (noisy against true; nothing here can be downloaded)."""

from __future__ import annotations

import streamlit as st

from dprelease.accounting.allocation import Allocation, delta_advice
from dprelease.accounting.tradeoffs import typical_cell_advice
from dprelease.plan.model import Plan
from dprelease.release.draw import Preview
from dprelease.release.metrics import error_metrics
from ui.markdown import md, static_table
from ui.preview_charts import table_chart
from ui.state import Workspace

SCROLL_AFTER = 720  # pixels: a taller chart (31 PUMAs, 3,143 counties) scrolls in a frame


def size_advice(ws: Workspace, plan: Plan, allocation: Allocation) -> None:
    """Advice that needs the true row count: it stays here, never on a public page."""
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


def preview_table(preview: Preview) -> None:
    """One table of the preview, chosen by the user: its errors before and after
    post-processing, the simulated accuracy, and its chart."""
    names = [t.name for t in preview.tables]
    if not names:
        return
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
            "**Expected accuracy, simulated from this preview's noisy measurements** "
            "(confidential: the preview's noise is not charged to the budget, so these figures "
            "must not leave this page; the release's report gives the same figures from its "
            "own, charged noise)"
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
