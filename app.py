"""dprelease dashboard entry point.

For now it opens on the bundled sample plan and shows what its budget buys, straight from the
library; the full dashboard (data, tables, budget, preview, release pages) is its own issue.
"""

from pathlib import Path

import streamlit as st

from dprelease.allocation import allocate
from dprelease.errors import DPReleaseError
from dprelease.planfile import load_plan

SAMPLE_PLAN = Path(__file__).parent / "data" / "census_sample.plan.yaml"

st.set_page_config(page_title="dprelease", layout="wide")
st.title("dprelease")
st.caption("Plan a privacy-loss budget and publish differentially private tables.")

try:
    plan = load_plan(SAMPLE_PLAN)
    allocation = allocate(plan)
except DPReleaseError as error:
    st.error(str(error))
    st.stop()

total = allocation.total
st.subheader("Bundled sample plan")
st.write(
    f"{len(plan.tables)} tables under {allocation.accounting} accounting "
    f"({allocation.allocation} allocation): the whole release is "
    f"ε = {total.epsilon:.4g}" + (f" at δ = {total.delta:.0e}" if total.delta else "") + "."
)
st.dataframe(
    [
        {
            "table": t.name,
            "by": " × ".join(t.spec.by) or "(total)",
            "cells": t.cells,
            "mechanism": t.noise.mechanism,
            "ε": t.epsilon,
            "ρ": t.rho,
            "noise std": round(t.noise.std, 2),
            f"MoE per cell ({allocation.confidence:.0%})": t.moe,
            "MoE whole table": t.moe_table,
        }
        for t in allocation.tables
    ],
    key="budget_table",
    hide_index=True,
)
st.info(
    "Make the release from the command line: "
    "`python -m dprelease release data/census_sample.plan.yaml --out release.zip`"
)
