"""The Risk page's reconstruction attack: exact tables against a preview of the DP release, an
integer program per small area (`dprelease.risk.reconstruct`)."""

from __future__ import annotations

import streamlit as st

from dprelease.data.count import load_data
from dprelease.errors import DPReleaseError
from dprelease.plan.model import Plan
from dprelease.risk.cost import ReconstructTask, admit_reconstruct
from dprelease.risk.reconstruct import MAX_PEOPLE, NothingToAttack, reconstruction_attack
from ui.markdown import md_error, md_lines
from ui.risk_view import keep, reconstruction_table, seed
from ui.state import Workspace, require_upload, upload_size


def reconstruction_section(ws: Workspace, plan: Plan | None, plan_problem: str | None) -> None:
    st.subheader("Reconstruction attack: exact tables vs the DP release")
    if plan is None:
        st.error(md_lines(plan_problem or "The plan is not valid."))
        st.stop()
    st.write(
        "An attacker rebuilds each small area's records from its published tables with an "
        "integer program (as the Census Bureau did with its 2010 tables). The DP side is a "
        "**preview draw** through the release path at your plan's ε: numpy noise, charged to "
        "nothing, never published."
    )
    controls = st.columns(5)
    geo = [col.name for col in plan.schema.columns if getattr(col, "parent", None)]
    parents = [getattr(plan.schema[name], "parent", None) for name in geo]
    # the finest first (the default), then the coarser levels of the hierarchy
    levels = list(dict.fromkeys([*geo, *(p for p in parents if p)])) or list(plan.schema.names)
    seed(ws, "risk_level", levels[0], levels.__contains__)
    seed(ws, "risk_max_areas", 50, lambda v: isinstance(v, int) and 1 <= v <= 5000)
    seed(ws, "risk_seconds", 2.0, lambda v: isinstance(v, float) and 0.1 <= v <= 60)
    seed(ws, "risk_per_area", False, lambda v: isinstance(v, bool))
    seed(ws, "risk_max_people", MAX_PEOPLE, lambda v: isinstance(v, int) and 1 <= v <= 100_000)
    level = keep(ws, "risk_level", controls[0].selectbox("Area level", levels, key="risk_level"))
    max_areas = int(
        keep(
            ws,
            "risk_max_areas",
            controls[1].number_input("Areas to try", 1, 5000, key="risk_max_areas"),
        )
    )
    seconds = float(
        keep(
            ws,
            "risk_seconds",
            controls[2].number_input("Seconds per area", 0.1, 60.0, key="risk_seconds"),
        )
    )
    max_people = int(
        keep(
            ws,
            "risk_max_people",
            controls[3].number_input(
                "Largest area (people)",
                1,
                100_000,
                key="risk_max_people",
                help="Areas with more people are not attacked (each is a bigger program).",
            ),
        )
    )
    per_area = keep(
        ws, "risk_per_area", controls[4].toggle("Every table per area", key="risk_per_area")
    )
    if st.button("Run the attack", key="risk_attack", type="primary"):
        bar = st.progress(0.0, "Preparing the tables…")

        def show(share: float, text: str) -> None:
            bar.progress(min(share, 1.0), text)

        try:
            upload = require_upload(ws)
            task = ReconstructTask(plan, level, per_area, max_areas, seconds)
            admit_reconstruct(task, upload_size(ws))  # issue 35: before the data are read
            encoded = load_data(upload.data, plan, filename=upload.name)
            options = task.attack_options()
            result = reconstruction_attack(
                plan, encoded, **options, max_people=max_people, progress=show
            )
            ws.memo.risk_attack = result.to_dict()
        except NothingToAttack as error:  # no table of rates stands for "not run"
            ws.memo.risk_attack = None
            st.error(
                md_lines(error.message("a finer Area level", "a higher Largest area (people)"))
            )
        except DPReleaseError as error:
            st.error(md_error(error, "Nothing changed."))
        bar.empty()
    attack = ws.memo.risk_attack
    if attack is not None:
        reconstruction_table(attack)
