"""Statistics and discovered domains on the Preview and Budget pages (issue 16)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pandas as pd
import streamlit as st

from dprelease.errors import PlanError
from dprelease.plan.model import Plan
from dprelease.plan.stat_text import value_heads
from dprelease.plan.statistic_edit import set_quantile_resolution
from dprelease.plan.summary_spec import QuantileSpec
from dprelease.release.draw import Preview
from dprelease.stats.allocation import PlanAllocation
from dprelease.stats.entry import StatisticBudget, statistic_error_curve
from ui.dpml_view import show_own_table
from ui.markdown import md, static_table
from ui.state import Workspace
from ui.statistic_methods import render_statistic_methods


def show_preview_statistics(preview: Preview) -> None:
    """PREVIEW values (numpy noise, never exported) of every statistic, in static tables."""
    for column, domain in preview.discovered.items():
        st.markdown(
            f"**Discovered domain of {md(column)}** (preview draw): {len(domain.values)} values "
            f"reached the threshold {domain.threshold}."
        )
    for released in preview.statistics:
        statistic = released.budget.statistic
        if show_own_table(released, preview):  # a regression's or PCA's table (issue 28.4)
            continue
        st.markdown(f"**{md(statistic.name)}**: PREVIEW noise (numpy), not a release")
        schema = preview.plan.schema  # cells as the count tables show them: "label (code)"
        cells = itertools.product(*(schema[c].display_labels for c in statistic.by))
        labels = [" × ".join(cell) for cell in cells] if statistic.by else ["(all)"]
        values = released.values.reshape(len(labels), -1)
        heads = value_heads(statistic.stat)
        errors = preview.statistic_errors.get(statistic.name) or [{} for _ in labels]
        rows = [
            {"cell": label, **dict(zip(heads, map(float, row), strict=True)), **error}
            for label, row, error in zip(labels, values.tolist(), errors, strict=True)
        ]
        static_table(rows)  # static: no download button on a preview
        st.caption(
            f"Errors at {preview.allocation.confidence:.0%} confidence, read from your data "
            "(confidential, like this whole page): a quantile's exact margin in rank and in "
            "value from the mechanism's own distribution, a mean's RMSE and bias by "
            "simulation, a sum's noise margin. Clamping to the bounds is not included."
        )
    render_statistic_methods(preview.allocation)  # issue 28.1: which method, and why


def show_statistics_budget(ws: Workspace, plan: Plan, allocation: PlanAllocation) -> None:
    """Each statistic's budget, resolution and data-free error, a box per quantile to set its
    resolution, and each statistic's error against ε (no data read)."""
    if not allocation.statistics and not allocation.discoveries:
        return
    st.subheader("Statistics")
    rows = []
    for budget in allocation.statistics:
        entry = budget.to_dict()
        shown = budget.kind.short_margin(entry["error"])
        rows.append(
            {
                "statistic": entry["name"],
                "what": entry["description"],
                "mechanism": entry["mechanism"],
                "epsilon": entry["epsilon"],
                "rho": entry["rho"],
                "resolution": entry["resolution"],
                "margin of error": shown,
            }
        )
    for discovery in allocation.discoveries:
        entry = discovery.to_dict()
        rows.append(
            {
                "statistic": f"discover {entry['column']}",
                "what": f"values with a noisy count ≥ {entry['threshold']}",
                "mechanism": entry["mechanism"],
                "epsilon": entry["epsilon"],
                "rho": entry["rho"],
                "resolution": None,
                "margin of error": f"δ = {entry['delta']:.2g}",
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="statistics_budget")
    st.caption(
        "A quantile's error is in rank (how many rows away from the true quantile); its error "
        "in value depends on the data and is shown on the Preview page. A mean's error is its "
        "sum's and count's, divided by the group's size. Clamping to the bounds adds a bias "
        "no margin of error includes. A statistic leaves out the rows whose value is missing "
        "or not a number (the sidebar counts them for you). Resolution: a quantile releases "
        "one of the values lo, lo + resolution, … ≤ hi; a sum or mean rounds each value to a "
        "multiple of it."
    )
    render_statistic_methods(allocation)  # issue 28.1: which method, and why
    _resolution_boxes(
        ws, [b for b in allocation.statistics if isinstance(b.statistic.stat, QuantileSpec)]
    )
    epsilons = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    # the accountant the allocation settled on (`auto` is chosen at allocation time)
    plan = replace(plan, budget=replace(plan.budget, accounting=allocation.accounting))
    curves = [
        {"statistic": b.name, **point}
        for b in allocation.statistics
        for point in statistic_error_curve(plan, b.statistic, epsilons)
    ]
    if curves:
        frame = pd.DataFrame(curves)
        st.markdown("**Each statistic's margin of error against its own ε** (log scales)")
        st.line_chart(frame, x="epsilon", y="moe", color="statistic")


def _resolution_boxes(ws: Workspace, quantiles: list[StatisticBudget]) -> None:
    """A box per quantile statistic for its resolution, written into the plan at once (a bad
    value is refused in one line and the plan keeps its last good value)."""
    if not quantiles:
        return

    def on_change(name: str, key: str) -> None:
        text = str(st.session_state[key]).strip()
        try:
            try:
                value = float(text)
            except ValueError:
                raise PlanError(
                    f"A quantile's resolution must be a number above 0, got {text!r}."
                ) from None
            ws.plan = set_quantile_resolution(ws.plan, name, value)
            ws.memo.budget_error = None
        except PlanError as error:
            ws.memo.budget_error = f"{error} The resolution of {name} is unchanged."

    boxes = st.columns(min(len(quantiles), 3))
    for at, budget in enumerate(quantiles):
        stat = budget.statistic.stat
        assert isinstance(stat, QuantileSpec)
        key = f"resolution_{budget.name}_{stat.grid_step!r}"  # a new box when the plan changes
        boxes[at % len(boxes)].text_input(
            f"Resolution of {budget.name}",
            value=f"{stat.grid_step:.10g}",
            key=key,
            on_change=on_change,
            args=(budget.name, key),
            help=f"The distance between the {stat.candidate_count:,} values the quantile "
            "can release. Finer costs no budget, but more candidates widen the rank error a "
            "little (it grows with their logarithm).",
        )
