"""Which method each statistic uses, and why (issue 28.1), on the Budget and Preview pages."""

from __future__ import annotations

import streamlit as st

from dprelease.plan.stat_kinds import UNBOUNDED
from dprelease.stats.allocation import PlanAllocation
from ui.markdown import md


def method_lines(allocation: PlanAllocation) -> list[str]:
    """One line per statistic: its name, its method and the reason (public texts)."""
    return [
        f"**{md(b.name)}**: {md(b.kind.method.replace('_', ' '))} — "
        f"{md(b.kind.choice(b.statistic.stat))}"
        for b in allocation.statistics
    ]


def render_statistic_methods(allocation: PlanAllocation) -> None:
    """The methods, as a short list under a heading (nothing without statistics)."""
    lines = method_lines(allocation)
    if lines:
        st.markdown(
            "**How each statistic is computed**\n\n" + "\n".join(f"- {line}" for line in lines)
        )
        unbounded = " or ".join(f"{method} (a {kind})" for kind, method in UNBOUNDED.items())
        st.caption(
            "Set a statistic's `method` in the plan (or when adding it on the Tables page): "
            f"{md(unbounded)} need no clamping bounds; the default clamps to the bounds."
        )
