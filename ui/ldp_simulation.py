"""The Local DP page's simulation on the data (CONFIDENTIAL: estimates against true counts, on
this screen only; kept per upload in the session)."""

from __future__ import annotations

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.ldp import PROTOCOLS, encode_column, simulate, simulate_schemes
from dprelease.ldp.cost import LdpTask, admit_ldp
from dprelease.plan.schema import Column
from ui.ldp_charts import simulation_bars
from ui.markdown import md_error, static_table
from ui.state import Workspace, parsed_table, require_upload, upload_size

NO_MODE_BAR = {"displayModeBar": False}  # no "download as PNG" of confidential charts


def simulation_section(
    ws: Workspace, columns: dict[str, Column], attributes: list[str], epsilon: float, best: str
) -> None:
    st.subheader("Simulation on your data")
    st.warning(
        "**CONFIDENTIAL — for your eyes only.** The simulation randomises your data as "
        "respondents would and compares the estimates with the true counts, so nothing here "
        "can be downloaded. Each run draws fresh randomness seeded from the system's secure "
        "source.",
        icon=":material/lock:",
    )
    if not columns:
        st.stop()
    sim_left, sim_right = st.columns(2)
    sim_column = sim_left.selectbox("Column", list(columns), key="ldp_sim_column")
    sim_protocol = sim_right.selectbox(
        "Protocol",
        list(PROTOCOLS),
        index=list(PROTOCOLS).index(best) if best in PROTOCOLS else 0,
        key="ldp_protocol",
    )
    if st.button("Simulate", key="ldp_simulate", type="primary"):
        try:
            task = LdpTask("simulate", domain_size=columns[sim_column].size)
            admit_ldp(task, upload_size(ws))  # issue 35: before the column is randomised
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
            for a in attributes:  # issue 35: every column's simulation, before any is run
                admit_ldp(LdpTask("simulate", domain_size=columns[a].size), upload_size(ws))
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
