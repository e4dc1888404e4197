"""Local DP: when each respondent randomises their own answer, which protocol, how many
people, and what it costs against central DP; then a CONFIDENTIAL simulation on the data."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.ldp import (
    PROTOCOLS,
    compare_attribute_schemes,
    encode_column,
    plan_ldp,
    respondents_needed,
    simulate,
    simulate_schemes,
    variance_against_epsilon,
)
from ui.ldp_charts import respondents_for_target, simulation_bars
from ui.ldp_charts import variance_against_epsilon as variance_chart
from ui.ldp_heavy import render_heavy_hitters, render_itemsets
from ui.markdown import md_error, md_lines, static_table
from ui.state import current_plan, parsed_table, require_upload, workspace

NO_MODE_BAR = {"displayModeBar": False}  # no "download as PNG" of confidential charts
ws = workspace()
st.title("Local DP")
st.write(
    "In a local-DP survey no one is trusted with the raw answers: each respondent randomises "
    "their own answer before it is sent. Pick ε and the question's domain to see which "
    "protocol is most accurate and how many respondents it needs compared with central DP."
)

plan, problem = current_plan(ws)
columns = {c.name: c for c in plan.schema.columns} if plan is not None else {}

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
            "what it is": p.title + (f", g = {p.g}" if p.name == "OLH" else ""),
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
    respondents_for_target(shares, respondents_needed(float(epsilon), domain_size, shares), target),
    key="ldp_needed_chart",
)

st.subheader("Several questions")
attributes = st.multiselect(
    "Questions (columns of the plan) each respondent answers",
    list(columns),
    key="ldp_attributes",
)
if len(attributes) >= 2:
    schemes = compare_attribute_schemes(float(epsilon), [columns[a].size for a in attributes], n)
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

# --- CONFIDENTIAL -------------------------------------------------------------------------
render_heavy_hitters(ws, float(epsilon))  # these need data, not a plan
render_itemsets(ws, float(epsilon))
st.subheader("Simulation on your data")
st.warning(
    "**CONFIDENTIAL — for your eyes only.** The simulation randomises your data as "
    "respondents would and compares the estimates with the true counts, so nothing here "
    "can be downloaded. Each run draws fresh randomness seeded from the system's secure source.",
    icon=":material/lock:",
)
if not columns:
    st.stop()
sim_left, sim_right = st.columns(2)
sim_column = sim_left.selectbox("Column", list(columns), key="ldp_sim_column")
sim_protocol = sim_right.selectbox(
    "Protocol",
    list(PROTOCOLS),
    index=list(PROTOCOLS).index(ldp_plan.best) if ldp_plan.best in PROTOCOLS else 0,
    key="ldp_protocol",
)
if st.button("Simulate", key="ldp_simulate", type="primary"):
    try:
        encoded = encode_column(parsed_table(ws), sim_column, columns[sim_column])
        st.session_state["ldp_simulation"] = (
            require_upload(ws).sha256,
            simulate(encoded, sim_protocol, float(epsilon)),
            columns[sim_column].display_labels,  # "label (code)" for the chart
        )
    except DPReleaseError as error:
        st.error(md_error(error))
if len(attributes) >= 2 and st.button("Simulate both schemes", key="ldp_simulate_schemes"):
    try:
        encoded_columns = [encode_column(parsed_table(ws), a, columns[a]) for a in attributes]
        st.session_state["ldp_schemes"] = (
            require_upload(ws).sha256,
            attributes,
            simulate_schemes(encoded_columns, sim_protocol, float(epsilon)),
        )
    except DPReleaseError as error:
        st.error(md_error(error))

kept = st.session_state.get("ldp_simulation")
if kept is not None and ws.upload is not None and kept[0] == ws.upload.sha256:
    result = kept[1]
    st.caption(
        f"{result.protocol} at ε = {result.epsilon:g} on {result.n:,} rows "
        f"({result.rows_left_out:,} without a value in the domain left out); margin of "
        f"error per count ±{result.moe:,.4g}."
    )
    static_table(
        [
            {
                "": name,
                "MAE": f"{m.mae:,.4g}",
                "RMSE": f"{m.rmse:,.4g}",
                "largest error": f"{m.max_abs:,.4g}",
                "counts off by more than the MoE": f"{m.share_beyond_moe:.1%}",
            }
            for name, m in result.errors().items()
        ]
    )
    st.plotly_chart(
        simulation_bars(result, kept[2]), key="ldp_simulation_chart", config=NO_MODE_BAR
    )
schemes_kept = st.session_state.get("ldp_schemes")
if schemes_kept is not None and ws.upload is not None and schemes_kept[0] == ws.upload.sha256:
    _, names, rmse = schemes_kept
    static_table(
        [
            {
                "question": name,
                "split ε: RMSE": f"{rmse['split'][i]:,.4g}",
                "sample one: RMSE": f"{rmse['sample'][i]:,.4g}",
            }
            for i, name in enumerate(names)
        ]
    )
    better = "sampling" if sum(rmse["sample"]) < sum(rmse["split"]) else "splitting ε"
    st.caption(f"On your data, {better} gave the smaller error (after projection).")
