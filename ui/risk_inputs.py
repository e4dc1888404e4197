"""The Risk page's choices: the quasi-identifiers, the sensitive attribute, k, and (c, l) of
recursive diversity; each kept across visits (`ui.risk_view.seed`/`keep`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dprelease.risk.measures import DEFAULT_L
from ui.risk_view import keep, seed
from ui.state import Workspace


@dataclass(frozen=True)
class RiskChoices:
    qi: list[str]
    sensitive: str
    k: int
    l: int  # noqa: E741  (the l of l-diversity)
    c: float


def risk_choices(ws: Workspace, columns: list[str]) -> RiskChoices:
    """Draw the choices (stops the page until a quasi-identifier and a sensitive column are
    picked)."""
    default_qi = [c for c in ("county", "age", "sex", "race") if c in columns] or columns[:2]
    st.subheader("Quasi-identifiers and sensitive attribute")
    seed(ws, "risk_qi", default_qi, lambda v: isinstance(v, list) and set(v) <= set(columns))
    qi = keep(
        ws,
        "risk_qi",
        st.multiselect("Quasi-identifiers (what an attacker may know)", columns, key="risk_qi"),
    )
    others = [c for c in columns if c not in qi]
    if not qi or not others:
        st.info("Pick at least one quasi-identifier and leave a column to be the sensitive one.")
        st.stop()
    seed(
        ws,
        "risk_sensitive",
        "education" if "education" in others else others[0],
        others.__contains__,
    )
    sensitive = keep(
        ws, "risk_sensitive", st.selectbox("Sensitive attribute", others, key="risk_sensitive")
    )
    k_col, l_col, c_col = st.columns(3)
    for key, default in (("risk_k", 5), ("risk_l", DEFAULT_L), ("risk_c", 2.0)):
        seed(ws, key, default, lambda v: isinstance(v, int | float) and v > 0)
    k = int(keep(ws, "risk_k", k_col.number_input("k to reach", 1, 1000, key="risk_k")))
    l = int(  # noqa: E741
        keep(
            ws,
            "risk_l",
            l_col.number_input(
                "l of recursive (c, l)-diversity",
                1,
                1000,
                key="risk_l",
                help=(
                    "Recursive (c, l)-diversity holds when, in every class, the most common "
                    "sensitive value is rarer than c times the records of its l-th and less common "
                    "values together. l is chosen apart from k: a sensitive attribute with fewer "
                    "than l values can never be (c, l)-diverse."
                ),
            ),
        )
    )
    c = float(
        keep(
            ws,
            "risk_c",
            c_col.number_input("c of recursive (c, l)-diversity", 0.1, 100.0, key="risk_c"),
        )
    )
    return RiskChoices(list(qi), sensitive, k, l, c)
