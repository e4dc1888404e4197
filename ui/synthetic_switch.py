"""The synthetic-microdata switch (issue 27), on the Preview and Release pages: it writes
`postprocess.synthetic` into the plan, says what it does, and shows the model's one-line
problem (no count table, a model too large) before anything is drawn."""

from __future__ import annotations

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.plan.edit import set_postprocess
from dprelease.plan.model import Plan
from ui.markdown import md
from ui.state import Workspace

HELP = (
    "Adds microdata.csv to the release: one row per synthetic person, drawn from a model "
    "fitted to the noisy measurements only (no privacy cost). The published tables are then "
    "its tabulations: whole, non-negative and consistent, but model estimates rather than "
    "unbiased counts; the report gives each table's simulated error."
)


def render_synthetic_switch(ws: Workspace, key: str) -> bool:
    """The toggle (widget `key`, one per page); saves a change into the plan, returns it."""
    written = bool(ws.plan.get("postprocess", {}).get("synthetic", False))
    wanted = st.toggle("Synthetic microdata", value=written, key=key, help=HELP)
    if wanted != written:
        ws.plan = set_postprocess(ws.plan, synthetic=wanted)
    return wanted


def show_synthetic_problem(plan: Plan) -> bool:
    """One st.error when the plan's synthetic model cannot be made (False), else True."""
    if not plan.postprocess.synthetic:
        return True
    from dprelease.synthetic.junction import check_model

    try:
        check_model(plan)
    except DPReleaseError as error:
        st.error(f"{md(error)} Your plan and data are unchanged.")
        return False
    st.caption(
        "Synthetic microdata on: the release adds microdata.csv, and its tables are the "
        "records' tabulations (model estimates; consistent, non-negative, whole)."
    )
    return True


def show_preview_microdata(rows: int | None) -> None:
    """The Preview's line on its synthetic records (confidential like the rest of the page)."""
    if rows is not None:
        st.caption(
            f"This preview made {rows:,} synthetic persons; the tables below are their "
            "tabulations (confidential: the preview's noise is not charged)."
        )
