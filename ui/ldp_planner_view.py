"""The Local DP page's planner (public: no data): ε, the question's domain and the respondents;
which protocol is most accurate against central DP, how many respondents a margin needs, and
several questions (split ε or sample one)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.ldp import (
    compare_attribute_schemes,
    plan_ldp,
    respondents_needed,
    variance_against_epsilon,
)
from dprelease.ldp.planner import LdpPlan
from dprelease.plan.schema import Column
from ui.ldp_charts import respondents_for_target
from ui.ldp_charts import variance_against_epsilon as variance_chart
from ui.markdown import md_error, md_lines, static_table


def ldp_inputs(columns: dict[str, Column]) -> tuple[float, int, int]:
    """ε per respondent, the domain's size (typed, or a column of the plan's), respondents."""
    left, middle, right = st.columns(3)
    epsilon = left.number_input(
        "ε per respondent", min_value=0.01, max_value=100.0, value=1.0, step=0.1, key="ldp_epsilon"
    )
    source = middle.radio(
        "Domain",
        ["Domain size", "A column of the plan"],
        key="ldp_domain_source",
        horizontal=True,
        disabled=not columns,
    )
    if source == "A column of the plan" and columns:
        column_name = middle.selectbox("Column", list(columns), key="ldp_column")
        domain_size = columns[column_name].size
        middle.caption(f"Its public domain has {domain_size} values (from the plan).")
    else:
        domain_size = int(
            middle.number_input(
                "Domain size d", min_value=2, max_value=1_000_000, value=10, key="ldp_domain_size"
            )
        )
    n = int(
        right.number_input(
            "Respondents n", min_value=1, max_value=10**10, value=10_000, step=1000, key="ldp_n"
        )
    )
    return float(epsilon), domain_size, n


def ldp_plan_view(epsilon: float, domain_size: int, n: int) -> LdpPlan:
    """The protocols against central DP, ε's effect, and the respondents a margin needs (stops
    the page on a refused input)."""
    try:
        ldp_plan = plan_ldp(float(epsilon), domain_size, n)
    except DPReleaseError as error:
        st.error(md_error(error))
        st.stop()

    st.success(ldp_plan.answer(), icon=":material/groups:")
    static_table(
        [
            {
                "protocol": p.name + (" (best)" if p.name == ldp_plan.best else ""),
                "what it is": p.title + (f", g = {p.g}" if p.g is not None else ""),
                "variance of a count near 0": f"{p.variance:,.4g}",
                "95% margin of error": f"±{p.moe:,.4g}",
            }
            for p in ldp_plan.protocols
        ]
        + [
            {
                "protocol": "central",
                "what it is": "discrete Laplace histogram, sensitivity 1, trusted curator",
                "variance of a count near 0": f"{ldp_plan.central.variance:,.4g}",
                "95% margin of error": f"±{ldp_plan.central.moe:,.4g}",
            }
        ]
    )

    epsilons = list(np.geomspace(0.05, 10, 60))
    st.plotly_chart(
        variance_chart(epsilons, variance_against_epsilon(epsilons, domain_size, n), epsilon, n),
        key="ldp_variance_chart",
    )
    target = st.select_slider(
        "Target margin of error (share of respondents)",
        options=[0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1],
        value=0.01,
        format_func=lambda s: f"±{s:.1%}",
        key="ldp_target",
    )
    shares = list(np.geomspace(0.001, 0.2, 50))
    needed = respondents_needed(float(epsilon), domain_size, [target])
    st.caption(
        f"For ±{target:.1%} at ε = {epsilon:g}: {ldp_plan.best} needs "
        f"{needed[ldp_plan.best][0]:,.0f} respondents, central DP {needed['central'][0]:,.0f}."
    )
    st.plotly_chart(
        respondents_for_target(
            shares, respondents_needed(float(epsilon), domain_size, shares), target
        ),
        key="ldp_needed_chart",
    )
    return ldp_plan


def several_questions(
    columns: dict[str, Column], problem: str | None, epsilon: float, n: int
) -> list[str]:
    """Several questions per respondent: split ε, or each answers one sampled question."""
    st.subheader("Several questions")
    attributes = st.multiselect(
        "Questions (columns of the plan) each respondent answers",
        list(columns),
        key="ldp_attributes",
    )
    if len(attributes) >= 2:
        schemes = compare_attribute_schemes(
            float(epsilon), [columns[a].size for a in attributes], n
        )
        st.info(schemes.answer())
        static_table(
            [
                {
                    "question": name,
                    "split ε: protocol": schemes.split.protocols[i],
                    "split ε: variance": f"{schemes.split.variances[i]:,.4g}",
                    "sample one: protocol": schemes.sample.protocols[i],
                    "sample one: variance": f"{schemes.sample.variances[i]:,.4g}",
                }
                for i, name in enumerate(attributes)
            ]
        )
        st.caption("Variance of the count of an average value (n/d), so sampling pays its cost.")
    elif not columns:
        st.info(
            md_lines(problem)
            if problem
            else "Declare columns on the Data page to compare several questions."
        )
    return list(attributes)
