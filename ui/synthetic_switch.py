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


SHARE_HELP = (
    "0: the microdata come from the tables' measurements alone (no extra cost). Above 0: this "
    "part of the budget measures every column no table holds and pairs of columns chosen "
    "privately, so the microdata answer them too; the tables get the rest (issue 38.6)."
)


def render_synthetic_switch(ws: Workspace, key: str) -> bool:
    """The toggle (widget `key`, one per page) and, when on, the synthesis' own share of the
    budget (`postprocess.synthetic: {budget_share: S}`); saves a change into the plan."""
    written = ws.plan.get("postprocess", {}).get("synthetic", False)
    wanted = st.toggle("Synthetic microdata", value=bool(written), key=key, help=HELP)
    value: bool | dict[str, float] = wanted
    if wanted:
        share = written.get("budget_share", 0.0) if isinstance(written, dict) else 0.0
        chosen = st.number_input(
            "Its own share of the budget",
            min_value=0.0,
            max_value=0.9,
            value=float(share),
            step=0.05,
            key=f"{key}_share",
            help=SHARE_HELP,
        )
        value = {"budget_share": float(chosen)} if chosen > 0 else True
    if value != written:
        ws.plan = set_postprocess(ws.plan, synthetic=value)
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
