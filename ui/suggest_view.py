"""Release page: which detailed tables are worth their budget (the sparse vector, charged)."""

from __future__ import annotations

import streamlit as st

from dprelease.data.count import count, load_data
from dprelease.errors import DPReleaseError
from dprelease.ledger.store import AlreadyChargedError, Ledger
from dprelease.plan.model import Plan
from dprelease.release.publish import Account
from dprelease.release.suggest import Question, candidates_plan, charged_suggestion
from ui.markdown import md, static_table
from ui.state import Workspace


def suggest_tables(ws: Workspace, plan: Plan, book: Ledger, account: Account) -> None:
    upload = ws.upload
    if upload is None:  # a plan without data: nothing to ask
        return
    with st.expander("Which detailed tables are worth their budget? (sparse vector, charged)"):
        st.write(
            "Asks, privately, which of the chosen tables have a cell above a threshold T: "
            "each table's largest cell and T get fresh secure noise (the sparse vector "
            "technique). It costs the ε below whatever the number of tables, stops after the "
            "given number of positives, and is charged to this data set's ledger as a spend "
            "of its own, before the answer is shown."
        )
        with st.form("suggest_form"):
            names = st.multiselect(
                "Candidate tables", [t.name for t in plan.tables], key="suggest_tables"
            )
            left, middle, right = st.columns(3)
            threshold = left.number_input("T (a cell count)", 1, value=100, key="suggest_t")
            epsilon = middle.number_input(
                "ε for this question", 0.01, 5.0, value=0.1, key="suggest_epsilon"
            )
            positives = right.number_input("Stop after positives", 1, value=3, key="suggest_c")
            asked = st.form_submit_button(f"Ask and charge ε = {epsilon:g}")
        if asked:
            try:
                candidates = candidates_plan(plan, names)
                counts = count(load_data(upload.data, candidates, filename=upload.name), candidates)
                question = Question(tuple(names), int(threshold), float(epsilon), int(positives))
                ws.suggestion = charged_suggestion(
                    candidates,
                    counts,
                    question,
                    account=account,
                    release_id=f"{ws.attempt_id}-suggest-{len(names)}-{threshold}-{epsilon}",
                )
            except AlreadyChargedError:
                st.info("This question was already asked and charged; it was not asked again.")
            except DPReleaseError as error:
                st.error(f"{md(error)} Nothing was charged.")
        suggestion = ws.suggestion
        if suggestion is not None:
            marks = {True: "has a cell above T", False: "no cell above T", None: "not asked"}
            static_table(
                [
                    {"table": name, f"T = {suggestion.threshold}": marks[answer]}
                    for name, answer in zip(
                        suggestion.candidates, suggestion.answer.above, strict=True
                    )
                ]
            )
            st.caption(f"Charged ε = {suggestion.epsilon:g} (noisy answers: they can be wrong).")
