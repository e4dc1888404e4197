"""Release: the one action that spends budget. Fresh secure noise, charged to the ledger
once, then the zip to download and the report."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dprelease.accounting.allocation import Allocation
from dprelease.budget_text import budget_text, cost_text
from dprelease.errors import DPReleaseError
from dprelease.ledger.store import AlreadyChargedError
from dprelease.limits import EPSILON_CAP_LIMIT
from dprelease.plan.model import Plan
from dprelease.plan.parse import DATASET_NAME_RULE
from dprelease.release.publish import Account, charged_release
from dprelease.release.service import check_fits
from dprelease.release.statistics import upload_inputs
from ui.markdown import md, md_error, md_lines
from ui.release_view import code_download, coverage_gate, session_releases, show_postprocess
from ui.state import (
    ReleaseResult,
    current_allocation,
    ledger,
    ledger_account,
    plan_key,
    require_upload,
    workspace,
)
from ui.suggest_view import suggest_tables
from ui.synthetic_switch import render_synthetic_switch, show_synthetic_problem


def _on_dataset_name() -> None:
    name = st.session_state["dataset_name"].strip()
    if not name:
        ws.plan.pop("dataset", None)
    elif len(name) <= 200 and name.isprintable():
        ws.plan = {**ws.plan, "dataset": name}
    else:
        ws.memo.dataset_name_error = DATASET_NAME_RULE
        return
    ws.memo.dataset_name_error = None


ws = workspace()
st.title("5 · Release")
plan, allocation, problem = current_allocation(ws)
if problem:
    st.error(md_lines(problem))
if plan is None or allocation is None:
    session_releases(ws)
    st.stop()

book = ledger()
total = allocation.total
cost = cost_text(total.epsilon, total.delta)
st.markdown(
    f"**{len(allocation.tables)} tables**, {sum(t.cells for t in allocation.tables):,} cells, "
    + (f"**{len(allocation.statistics)} statistics**, " if allocation.statistics else "")
    + (f"{len(allocation.discoveries)} discovered domains, " if allocation.discoveries else "")
    + f"{allocation.accounting} accounting, {allocation.allocation} allocation: this release "
    f"costs **{cost}** of the data set's lifetime budget."
)
show_postprocess(plan)
render_synthetic_switch(ws, "release_synthetic")  # issue 27
if not show_synthetic_problem(plan):
    session_releases(ws)
    st.stop()
code_download(ws)  # issue 24: the release as code
if ws.upload is None:
    session_releases(ws)
upload = require_upload(ws)  # a plan without data: say where to release it, and stop
# --- the ledger -----------------------------------------------------------------------------
st.subheader("Budget ledger for this data set")
st.text_input(
    "Data set name (optional): the ledger account this release is charged to",
    value=str(ws.plan.get("dataset", "")),
    key="dataset_name",
    on_change=_on_dataset_name,
    help="Saved in the plan as `dataset:`. The same records share one account whatever the "
    "name; a name also keeps changed records of the same data set in one account.",
)
if ws.memo.dataset_name_error:
    st.error(ws.memo.dataset_name_error)
try:
    account = ledger_account(ws, book)
    resolved = book.account(account.records, account.name, account.legacy)
    balance = book.balance(resolved.key)
    entries = book.entries(resolved.key)
except DPReleaseError as error:
    st.error(md(error))
    st.stop()
if resolved.notice:
    st.warning(md(resolved.notice))
st.caption(
    f"Account {md(resolved.name or 'without a name')}, key {resolved.key[:12]}…: the same "
    "records (any file format, row order or line endings) share this ledger, across sessions "
    "and restarts."
)
suggest_tables(ws, plan, book, account)  # issue 16: the sparse vector, charged
if entries:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "created (UTC)": e.created,
                    "ε": e.epsilon,
                    "δ": e.delta,
                    "accounting": e.accounting,
                    "tables": len(e.tables),
                    "label": e.label,
                }
                for e in entries
            ]
        ),
        key="ledger_table",
        hide_index=True,
        column_config={"δ": st.column_config.NumberColumn(format="%.1e")},
    )
else:
    st.caption("No release from this data set yet.")
cap_col, set_col = st.columns([2, 1])
capped = balance.cap_epsilon
cap = cap_col.number_input(  # issue 25.11: a first cap, or a lower one; never a higher
    "Lifetime cap on ε for this data set (0 = no cap)"
    if capped is None
    else "Lower the lifetime cap on ε for this data set",
    min_value=0.0,
    max_value=EPSILON_CAP_LIMIT if capped is None else capped,
    value=float(capped or 0.0),
    step=0.5,
    key="cap_input",
)
if set_col.button("Set cap" if capped is None else "Lower cap", key="set_cap"):
    try:
        new_cap = (cap or None) if capped is None else cap
        book.set_cap(
            account.records, new_cap, name=account.name, legacy=account.legacy, only_lower=True
        )
        st.rerun()
    except DPReleaseError as error:
        st.error(md(error))
st.caption(
    "The dashboard sets a first cap and lowers one. Raising or removing a cap is done by "
    "whoever owns the ledger file: `dprelease ledger cap --dataset NAME --epsilon E`, NAME "
    f"being {md(resolved.name or resolved.key)}."
)
left = balance.left_epsilon
st.markdown(
    f"Spent so far: **ε = {budget_text(balance.spent_epsilon)}** over {balance.releases} "
    "release(s); "
    + (
        "no lifetime cap set."
        if left is None
        else f"left of the cap: **ε = {budget_text(left, 'down')}**."
    )
)

# --- the release ----------------------------------------------------------------------------
st.subheader("Create the release")


def _create(plan: Plan, allocation: Allocation, account: Account) -> None:
    bar = st.progress(0.0, text="Starting…")

    def show_progress(fraction: float, text: str) -> None:
        bar.progress(fraction, text=text)

    try:
        show_progress(0.1, "Reading and encoding the data…")
        counts, statistics = upload_inputs(upload.data, plan, upload.name)
        show_progress(0.4, "Counting every table…")
        published = charged_release(
            plan,
            allocation,
            counts,
            account,
            release_id=ws.attempt_id,
            label=f"{len(allocation.tables)} tables, {len(allocation.statistics)} "
            f"statistics from {upload.name}",
            progress=show_progress,
            statistics_source=statistics,
        )
    except AlreadyChargedError:
        st.info("This release was already made and charged; it was not drawn again.")
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing was charged."))
    else:
        ws.add_release(
            ReleaseResult(
                release_id=ws.attempt_id,
                zip_bytes=published.zip_bytes,
                report_html=published.report_html,
                epsilon=published.entry.epsilon,
                delta=published.entry.delta,
                created=published.entry.created,
                plan_key=plan_key(ws),
                data_name=upload.name,
            )
        )
        st.rerun()


def _ask_another() -> None:
    ws.memo.confirm_another = True


def _another(confirmed: bool) -> None:
    ws.memo.confirm_another = False
    if confirmed:
        ws.new_attempt()


result = ws.release
if result is None:
    try:  # ε and δ against the account's caps (δ: 1e-3 unless one is set)
        check_fits(account, total)  # the CLI's check too (dprelease.release.service)
        fits = True
    except DPReleaseError as error:
        fits = False
        st.error(md_error(error))  # says what to do: lower the budget or raise the cap
    covered = coverage_gate(ws)
    sure = st.checkbox(
        f"I understand that this spends {cost} from this data set, once and for good.",
        key=f"confirm_{ws.attempt_id}",
    )
    if st.button(
        "Create release",
        key="create_release",
        type="primary",
        disabled=not (sure and fits and covered),
    ):
        _create(plan, allocation, account)
else:
    st.success(
        f"Release made and charged once ({cost_text(result.epsilon, result.delta)}). Download "
        "it below; the "
        "report follows."
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
        st.button("Prepare another release", key="new_release", on_click=_ask_another)
    else:
        st.warning(
            "Prepare another release? It spends budget again when you create it. This one "
            "stays downloadable in the list of this session's releases below."
        )
        yes, no = st.columns([1, 3])
        yes.button("Yes, prepare another", key="new_release_yes", on_click=_another, args=(True,))
        no.button("Cancel", key="new_release_no", on_click=_another, args=(False,))
    with st.expander("The report (also in the zip as report.html)", expanded=True):
        st.html(result.report_html)
session_releases(ws)
