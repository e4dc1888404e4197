"""The "ε as risk" block beside ε on the Budget page (no data: ε and δ only)."""

from __future__ import annotations

import streamlit as st

from dprelease.accounting.epsilon_meaning import explain_epsilon, tpr_bound


def epsilon_risk(epsilon: float | None, delta: float | None) -> None:
    if epsilon is None:
        return
    meaning = explain_epsilon(epsilon, delta or 0.0)
    with st.container(border=True, key="epsilon_risk"):
        st.markdown("**What this ε means as risk**")
        st.write(meaning.sentence)
        odds, test, adv = st.columns(3)
        odds.metric("Odds can change by at most", f"×{meaning.odds_factor:.3g}")
        test.metric(
            "Membership test: TPR at FPR 1 %", f"≤ {tpr_bound(0.01, epsilon, delta or 0.0):.1%}"
        )
        adv.metric("Largest advantage TPR − FPR", f"{meaning.max_advantage:.3f}")
        st.caption(
            "Posterior odds ≤ e^ε × prior odds (plus δ); any membership test has "
            "TPR ≤ e^ε·FPR + δ, so TPR − FPR ≤ (e^ε − 1 + 2δ)/(e^ε + 1)."
        )
