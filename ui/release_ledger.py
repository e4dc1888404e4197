"""The Release page's ledger section: the data set's name (its account), the account's past
releases, its lifetime cap (set or lowered here; raised only by the ledger's owner) and what is
left. The account is the release service's (`dprelease.release.service.ledger_account`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dprelease.budget_text import budget_text
from dprelease.errors import DPReleaseError
from dprelease.ledger.store import Ledger
from dprelease.ledger.values import Balance
from dprelease.limits import EPSILON_CAP_LIMIT
from dprelease.plan.model import Plan
from dprelease.plan.names import DATASET_NAME_RULE, is_dataset_name
from dprelease.release.publish import Account
from ui.markdown import md
from ui.state import Workspace, ledger, ledger_account
from ui.suggest_view import suggest_tables


def _on_dataset_name(ws: Workspace) -> None:
    name = st.session_state["dataset_name"].strip()
    if not name:
        ws.plan.pop("dataset", None)
    elif is_dataset_name(name):
        ws.plan = {**ws.plan, "dataset": name}
    else:
        ws.memo.dataset_name_error = DATASET_NAME_RULE
        return
    ws.memo.dataset_name_error = None


def ledger_section(ws: Workspace, plan: Plan) -> Account:
    """Draw the ledger section; return the account a release is charged to (stops the page
    when the ledger cannot be read)."""
    st.subheader("Budget ledger for this data set")
    st.text_input(
        "Data set name (optional): the ledger account this release is charged to",
        value=str(ws.plan.get("dataset", "")),
        key="dataset_name",
        on_change=_on_dataset_name,
        args=(ws,),
        help="Saved in the plan as `dataset:`. The same records share one account whatever the "
        "name; a name also keeps changed records of the same data set in one account.",
    )
    if ws.memo.dataset_name_error:
        st.error(ws.memo.dataset_name_error)
    book = ledger()
    try:
        account = ledger_account(ws, book)
        resolved = account.resolve()
        balance = book.balance(resolved.key)
        entries = book.entries(resolved.key)
    except DPReleaseError as error:
        st.error(md(error))
        st.stop()
    if resolved.notice:
        st.warning(md(resolved.notice))
    st.caption(
        f"Account {md(resolved.name or 'without a name')}, key {resolved.key[:12]}…: the same "
        "records (any file format, row order or line endings) share this ledger, across "
        "sessions and restarts."
    )
    suggest_tables(ws, plan, book, account)  # issue 16: the sparse vector, charged
    if entries:
        rows = [
            {
                "created (UTC)": e.created,
                "ε": budget_text(e.epsilon),  # issue 37: "0", not "0.0e+0", for δ of pure DP
                "δ": budget_text(e.delta),
                "accounting": e.accounting,
                "tables": len(e.tables),
                "label": e.label,
            }
            for e in entries
        ]
        st.dataframe(
            pd.DataFrame(rows),
            key="ledger_table",
            hide_index=True,
        )
    else:
        st.caption("No release from this data set yet.")
    _cap_inputs(book, account, balance, resolved.name or resolved.key)
    return account


def _cap_inputs(book: Ledger, account: Account, balance: Balance, shown_name: str) -> None:
    """A first cap, or a lower one; never a higher (issue 25.11); then what is spent and left."""
    cap_col, set_col = st.columns([2, 1])
    capped = balance.cap_epsilon
    cap = cap_col.number_input(
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
            account.set_cap(new_cap, only_lower=True)
            st.rerun()
        except DPReleaseError as error:
            st.error(md(error))
    st.caption(
        "The dashboard sets a first cap and lowers one. Raising or removing a cap is done by "
        "whoever owns the ledger file: `dprelease ledger cap --dataset NAME --epsilon E`, NAME "
        f"being {md(shown_name)}."
    )
    left = balance.left_epsilon
    total = balance.composed
    st.markdown(
        f"Spent so far: **ε = {budget_text(balance.spent_epsilon)}** summed over "
        f"{balance.releases} release(s), **ε = {budget_text(total.epsilon, 'up')}** "
        f"(δ = {budget_text(total.delta, 'up')}) composed by the {total.rule}; "
        + (
            "no lifetime cap set."
            if left is None
            else f"left of the cap under the composed total: **ε = {budget_text(left, 'down')}**."
        )
    )
    st.caption(
        "Releases compose tighter than a sum: zCDP releases add their ρ and convert once. The "
        "cap is kept by a privacy filter that stays valid when each release is chosen after "
        "the earlier ones were seen (see the ledger's documentation)."
    )
