"""The Release page's parts: the post-processing that will run, the release as a notebook, the
coverage gate, and the releases of this session (each stays downloadable until the session
ends)."""

from __future__ import annotations

import streamlit as st

from dprelease.budget_text import cost_text
from dprelease.plan.model import Plan
from dprelease.postprocess.pipeline import STEP_ORDER
from dprelease.release.code_export import release_notebook
from ui.markdown import md
from ui.state import Workspace, consent_key, coverage

_STEP_TEXT = {
    "consistent": "**consistent**: least squares over all tables, so that shared sub-tables "
    "agree and children add up to their parents",
    "clamp": "**clamp** every count into [{low}, {high}]",
    "nonnegative": "**nonnegative**: no count below 0",
    "integer": "**integer**: counts rounded to whole numbers",
}


def postprocess_steps(plan: Plan) -> list[str]:
    """The post-processing steps the plan switches on, in the order they run."""
    post = plan.postprocess
    low, high = post.clamp
    wanted = {
        "consistent": post.consistent,
        "clamp": low is not None or high is not None,
        "nonnegative": post.nonnegative,
        "integer": post.integer,
    }
    return [
        _STEP_TEXT[step].format(
            low="−∞" if low is None else f"{low:g}", high="∞" if high is None else f"{high:g}"
        )
        for step in STEP_ORDER
        if wanted[step]
    ]


def show_postprocess(plan: Plan) -> None:
    steps = postprocess_steps(plan)
    st.markdown(
        "**Post-processing that will run** (no privacy cost; switch steps on the Preview page): "
        + ("; ".join(f"{i}. {text}" for i, text in enumerate(steps, 1)) if steps else "none")
        + "."
    )


def code_download(ws: Workspace) -> None:
    """The release as a notebook (issue 24): the plan, read from this page's data file by
    name, released through the library and charged to the same ledger. Nothing is drawn here;
    running the notebook spends the budget."""
    data = ws.upload.name if ws.upload is not None else ws.memo.wanted_data or "DATA.csv"
    st.download_button(
        "Download as a notebook (.ipynb)",
        lambda: release_notebook(ws.plan, data),
        file_name="dprelease-release.ipynb",
        mime="application/x-ipynb+json",
        key="download_notebook",
        help=f"Code that loads this plan, reads {md(data)} from the notebook's folder, releases "
        "through the dprelease library (charging the same ledger) and shows the tables with "
        "their margins. Running it spends the budget; downloading it does not.",
    )


def coverage_gate(ws: Workspace) -> bool:
    """Whether the rows the tables and statistics leave out allow a release: above 1% of the
    rows the data holder confirms, having seen the columns and counts (CONFIDENTIAL: on this
    screen only, never in the release)."""
    figures = coverage(ws)
    if figures is None or not figures.needs_confirmation():
        return True
    st.warning(
        f"**Rows left out (confidential, yours only):** {md(figures.summary())}. These rows are "
        "missing from the tables and statistics that use those columns; check the domains on "
        "the Data page (e.g. '01' vs '1'), and a statistic's column for missing values."
    )
    return st.checkbox(
        f"Release anyway without these {figures.rows_left_out:,} rows in the tables and "
        f"statistics that use {', '.join(md(name) for name in figures.lossy_columns)}.",
        key=consent_key(ws, "coverage_ok"),
    )


def session_releases(ws: Workspace) -> None:
    """Every release made in this session, each with its download, newest first."""
    if not ws.releases:
        return
    st.subheader("Releases of this session")
    st.caption(
        "Each stays downloadable here until this browser session ends (the zips are kept in "
        "this session only, never on the server's disk)."
    )
    for number, result in reversed(list(enumerate(ws.releases, 1))):
        cost = cost_text(result.epsilon, result.delta)
        text, button = st.columns([3, 1])
        when = result.created.replace("T", " ").removesuffix("+00:00")  # the ledger's UTC time
        text.markdown(f"**Release {number}** — {when} UTC, {cost}, {md(result.data_name)}")
        button.download_button(
            f"Download release {number} (zip)",
            result.zip_bytes,
            file_name=f"dprelease-release-{number}.zip",
            mime="application/zip",
            key=f"download_{result.release_id}",
        )
