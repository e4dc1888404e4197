"""Which method each statistic uses, and why (issue 28.1), on the Budget and Preview pages; with
`method: auto` (issue 38.3), every candidate method's expected error and which was chosen."""

from __future__ import annotations

import streamlit as st

from dprelease.plan.stat_kinds import AUTO, UNBOUNDED
from dprelease.stats.allocation import PlanAllocation
from ui.markdown import md, static_table


def method_lines(allocation: PlanAllocation) -> list[str]:
    """One line per statistic: its name, the method that draws and the reason (public)."""
    return [
        f"**{md(b.name)}**: {md(b.method.replace('_', ' '))} — {md(b.reason())}"
        for b in allocation.statistics
    ]


def expected_error_rows(allocation: PlanAllocation) -> list[dict[str, object]]:
    """`auto`'s candidates: each method's expected RMSE on the reference cell, and the choice."""
    rows: list[dict[str, object]] = []
    for budget in allocation.statistics:
        choice = budget.method_choice()
        if choice is None:
            continue
        rows += [
            {
                "statistic": budget.name,
                "method": option["method"].replace("_", " "),
                "expected RMSE": f"{option['expected_rmse']:,.4g}",
                "chosen": "✓" if option["chosen"] else "",
                "assumes": choice["assumption"],
            }
            for option in choice["candidates"]
        ]
    return rows


def render_statistic_methods(allocation: PlanAllocation) -> None:
    """The methods, as a short list under a heading, and auto's expected errors (nothing
    without statistics)."""
    lines = method_lines(allocation)
    if not lines:
        return
    st.markdown("**How each statistic is computed**\n\n" + "\n".join(f"- {line}" for line in lines))
    rows = expected_error_rows(allocation)
    if rows:
        st.markdown("**Expected error of each method** (`method: auto`; no data read)")
        static_table(rows)
    unbounded = " or ".join(f"{method} (a {kind})" for kind, method in UNBOUNDED.items())
    st.caption(
        "Set a statistic's `method` in the plan (or when adding it on the Tables page): "
        f"{md(unbounded)} need no clamping bounds; the default clamps to the bounds; {AUTO} "
        "picks the method with the least expected RMSE for the bounds, ε and a cell of "
        "`min_cell_rows` rows (a public lower bound; without it a small cell)."
    )
