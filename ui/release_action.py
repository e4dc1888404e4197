"""The Release page's action: the checks and the confirmation before, the release through the
one release service (`dprelease.release.service.release_plan`, the CLI's flow too), and the
finished release's download and report after."""

from __future__ import annotations

import streamlit as st

from dprelease.budget_text import cost_text
from dprelease.errors import DPReleaseError
from dprelease.ledger.store import AlreadyChargedError
from dprelease.plan.model import Plan
from dprelease.release import service
from dprelease.release.publish import Account
from dprelease.release.service import ReleaseRequest, check_fits
from dprelease.stats.allocation import PlanAllocation
from ui.markdown import md_error
from ui.release_view import coverage_gate
from ui.state import (
    ReleaseResult,
    Workspace,
    consent_key,
    plan_key,
    release_data,
    require_upload,
)


def release_action(ws: Workspace, plan: Plan, allocation: PlanAllocation, account: Account) -> None:
    """Before the release: the caps, the coverage gate, the confirmation and the button; after
    it: its download, "Prepare another" and the report."""
    st.subheader("Create the release")
    cost = cost_text(allocation.total.epsilon, allocation.total.delta)
    if ws.release is not None:
        _released(ws, ws.release)
        return
    try:  # ε and δ against the account's caps (δ: 1e-3 unless one is set)
        check_fits(account, allocation.total)  # the CLI's check too (dprelease.release.service)
        fits = True
    except DPReleaseError as error:
        fits = False
        st.error(md_error(error))  # says what to do: lower the budget or raise the cap
    covered = coverage_gate(ws)
    sure = st.checkbox(
        f"I understand that this spends {cost} from this data set, once and for good.",
        key=consent_key(ws, "confirm"),  # given again for new data, a new plan, each release
    )
    if st.button(
        "Create release",
        key="create_release",
        type="primary",
        disabled=not (sure and fits and covered),
    ):
        _create(ws, plan, allocation)


def _create(ws: Workspace, plan: Plan, allocation: PlanAllocation) -> None:
    upload = require_upload(ws)
    bar = st.progress(0.0, text="Starting…")

    def show_progress(fraction: float, text: str) -> None:
        bar.progress(fraction, text=text)

    try:
        outcome = service.release_plan(  # the CLI's flow too
            ReleaseRequest(
                plan,
                release_data(ws),
                allocation=allocation,
                release_id=ws.attempt_id,
                label=f"{len(allocation.tables)} tables, {len(allocation.statistics)} "
                f"statistics from {upload.name}",
                progress=show_progress,
                allow_left_out=True,  # `coverage_gate` asked above, by the same 1% rule
            )
        )
    except AlreadyChargedError:
        st.info("This release was already made and charged; it was not drawn again.")
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was charged."))
    else:
        entry = outcome.entry
        assert entry is not None  # the dashboard's releases are always charged
        ws.add_release(
            ReleaseResult(
                release_id=ws.attempt_id,
                zip_bytes=outcome.zip_bytes,
                report_html=outcome.report_html,
                epsilon=entry.epsilon,
                delta=entry.delta,
                created=entry.created,
                plan_key=plan_key(ws),
                data_name=upload.name,
            )
        )
        st.rerun()


def _ask_another(ws: Workspace) -> None:
    ws.memo.confirm_another = True


def _another(ws: Workspace, confirmed: bool) -> None:
    ws.memo.confirm_another = False
    if confirmed:
        ws.new_attempt()


def _released(ws: Workspace, result: ReleaseResult) -> None:
    st.success(
        f"Release made and charged once ({cost_text(result.epsilon, result.delta)}). Download "
        "it below; the report follows."
    )
    st.download_button(
        "Download the release (zip)",
        result.zip_bytes,
        file_name="dprelease-release.zip",
        mime="application/zip",
        key="download_release",
        type="primary",
    )
    if not ws.memo.confirm_another:
        st.button("Prepare another release", key="new_release", on_click=_ask_another, args=(ws,))
    else:
        st.warning(
            "Prepare another release? It spends budget again when you create it. This one "
            "stays downloadable in the list of this session's releases below."
        )
        yes, no = st.columns([1, 3])
        yes.button(
            "Yes, prepare another", key="new_release_yes", on_click=_another, args=(ws, True)
        )
        no.button("Cancel", key="new_release_no", on_click=_another, args=(ws, False))
    with st.expander("The report (also in the zip as report.html)", expanded=True):
        st.html(result.report_html)
