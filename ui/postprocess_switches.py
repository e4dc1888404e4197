"""The Preview page's post-processing switches: consistent, no negatives, whole numbers, clamp.
They are part of the plan (`postprocess:`); what the plan leaves out shows the model's
defaults (`dprelease.plan.model.Postprocess`: consistent is on unless switched off)."""

from __future__ import annotations

import streamlit as st

from dprelease.plan.edit import set_postprocess
from dprelease.plan.model import Postprocess
from ui.state import Workspace


def postprocess_switches(ws: Workspace) -> None:
    """Draw the switches; keep a change in the plan."""
    written = ws.plan.get("postprocess", {})
    post = {**Postprocess().to_dict(), **written}  # what the plan leaves out: the model's defaults
    st.subheader("Post-processing")
    st.caption(
        "Applied to the noisy counts in a fixed order; it reads only the noisy measurements, so "
        "it costs no privacy."
    )
    switches = st.columns(4)
    consistent = switches[0].toggle(
        "Consistent tables",
        value=bool(post["consistent"]),
        key="pp_consistent",
        help="Shared sub-tables agree and children add up to parents (weighted least squares).",
    )
    nonnegative = switches[1].toggle(
        "No negative counts", value=bool(post["nonnegative"]), key="pp_nonnegative"
    )
    integer = switches[2].toggle("Whole numbers", value=bool(post["integer"]), key="pp_integer")
    clamp_on = switches[3].toggle(
        "Clamp to bounds",
        value=any(v is not None for v in post["clamp"]),
        key="pp_clamp",
    )
    clamp: list[float | None] = [None, None]
    if clamp_on:
        low_col, high_col = st.columns(2)
        lower, upper = [*(post.get("clamp") or []), None, None][:2]
        texts = (
            low_col.text_input(
                "Lower bound (empty = none)", "" if lower is None else f"{lower:g}", key="pp_lower"
            ),
            high_col.text_input(
                "Upper bound (empty = none)", "" if upper is None else f"{upper:g}", key="pp_upper"
            ),
        )
        try:
            clamp = [float(t) if t.strip() else None for t in texts]
        except ValueError:
            st.error("Clamp bounds must be numbers (or empty for no bound); they are unchanged.")
            clamp = [lower, upper]
    wanted = {
        "consistent": consistent,
        "nonnegative": nonnegative,
        "integer": integer,
        "clamp": clamp,
    }
    if any(written.get(k) != v for k, v in wanted.items()):
        ws.plan = set_postprocess(ws.plan, **wanted)
