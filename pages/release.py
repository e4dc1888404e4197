"""Release: the one action that spends budget. Fresh secure noise, charged to the ledger
once, then the zip to download and the report."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.ledger import AlreadyChargedError
from dprelease.publish import publish
from ui.markdown import md
from ui.state import ReleaseResult, current_allocation, ledger, workspace

ws = workspace()
st.title("5 · Release")
plan, allocation, problem = current_allocation(ws)
if problem:
    st.error(md(problem))
if plan is None or allocation is None:
    st.stop()

book = ledger()
dataset = ws.upload.sha256
total = allocation.total
cost = f"ε = {total.epsilon:.4g}" + (f", δ = {total.delta:.1e}" if total.delta else "")
st.markdown(
    f"**{len(allocation.tables)} tables**, {sum(t.cells for t in allocation.tables):,} cells, "
    f"{allocation.accounting} accounting, {allocation.allocation} allocation: this release "
    f"costs **{cost}** of the data set's lifetime budget."
)

# --- the ledger -----------------------------------------------------------------------------
st.subheader("Budget ledger for this data set")
try:
    balance = book.balance(dataset)
    entries = book.entries(dataset)
except DPReleaseError as error:
    st.error(md(error))
    st.stop()
st.caption(
    f"Data set {md(ws.upload.name)}, SHA-256 {dataset[:12]}…: the same bytes uploaded again share "
    "this ledger, across sessions and restarts."
)
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
cap = cap_col.number_input(
    "Lifetime cap on ε for this data set (0 = no cap)",
    min_value=0.0,
    max_value=1000.0,
    value=float(balance.cap_epsilon or 0.0),
    step=0.5,
    key="cap_input",
)
if set_col.button("Set cap", key="set_cap"):
    try:
        book.set_cap(dataset, cap or None)
        st.rerun()
    except DPReleaseError as error:
        st.error(md(error))
left = balance.left_epsilon
st.markdown(
    f"Spent so far: **ε = {balance.spent_epsilon:.4g}** over {balance.releases} release(s); "
    + ("no lifetime cap set." if left is None else f"left of the cap: **ε = {left:.4g}**.")
)

# --- the release ----------------------------------------------------------------------------
st.subheader("Create the release")
result = ws.release
if result is None:
    fits = left is None or (total.epsilon or 0) <= left
    if not fits:
        st.error(
            f"This release needs {cost} but only ε = {left:.4g} is left of the lifetime cap; "
            "lower the budget on the Budget page or raise the cap."
        )
    sure = st.checkbox(
        f"I understand that this spends {cost} from this data set, once and for good.",
        key=f"confirm_{ws.attempt_id}",
    )
    if st.button(
        "Create release", key="create_release", type="primary", disabled=not (sure and fits)
    ):
        bar = st.progress(0.0, text="Starting…")

        def show_progress(fraction: float, text: str) -> None:
            bar.progress(fraction, text=text)

        try:
            published = publish(
                ws.upload.data,
                ws.upload.name,
                plan,
                allocation,
                ledger=book,
                dataset=dataset,
                release_id=ws.attempt_id,
                label=f"{len(allocation.tables)} tables from {ws.upload.name}",
                progress=show_progress,
            )
        except AlreadyChargedError:
            st.info("This release was already made and charged; it was not drawn again.")
        except DPReleaseError as error:
            st.error(f"{md(error)} Nothing was charged.")
        else:
            ws.release = ReleaseResult(
                release_id=ws.attempt_id,
                zip_bytes=published.zip_bytes,
                report_html=published.report_html,
                epsilon=published.entry.epsilon,
                delta=published.entry.delta,
            )
            st.rerun()
    st.stop()

st.success(
    f"Release made and charged once (ε = {result.epsilon:.4g}). Download it below; the report "
    "follows."
)
st.download_button(
    "Download the release (zip)",
    result.zip_bytes,
    file_name="dprelease-release.zip",
    mime="application/zip",
    key="download_release",
    type="primary",
)
if st.button("Prepare another release", key="new_release"):
    ws.new_attempt()
    st.rerun()
with st.expander("The report (also in the zip as report.html)", expanded=True):
    st.html(result.report_html)
