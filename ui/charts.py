"""Plotly figures for the pages. They draw numbers the library computed; no arithmetic here
beyond shaping them for a chart."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dprelease.accounting.tradeoffs import AccountantBound, MoeCurve
from dprelease.stats.allocation import PlanAllocation
from ui.axes import category_axis, log_axis
from ui.chart_space import column_ticks, row_ticks
from ui.heatmaps import MAX_HEATMAP_ROWS, ROW_HEIGHT, heatmaps, small_multiples

__all__ = ["MAX_HEATMAP_ROWS", "ROW_HEIGHT", "heatmaps", "small_multiples"]  # and those below

_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}
LONG_DOMAIN = 25  # more cells than this: sorted horizontal bars instead of columns
MAX_BARS = 60  # bars shown of a long domain (the largest)
PLOT_PX = 300  # the plot's own height in a chart of columns, whatever its labels


def budget_split(allocation: PlanAllocation) -> go.Figure:
    """Each measurement's share of the budget, in percent of the whole (of ε, or of ρ under
    zCDP; under approx with strategy auto, of Δ₂²/σ², its part of the one Gaussian mechanism).

    Shares, rounded to 0.01%, not the amounts: an ε what-if that keeps the split sends the
    same figure, and the browser, which redraws a Plotly chart only when its figure changed,
    skips it (issue 37.9: the chart was most of the browser's work in a what-if). The amounts
    are in the tables above it."""
    accountant = allocation.accountant
    field = accountant.unit  # each share's field: epsilon or rho
    gaussian_set = accountant.priced_as_set and allocation.derived
    unit = "Δ₂²/σ²" if gaussian_set else accountant.symbol
    measured = allocation.measurements
    if gaussian_set:
        values = [m.sensitivity.l2_squared / m.noise.scale**2 for m in measured]
    else:
        values = [getattr(m, field) or 0.0 for m in measured]
    names = [m.name for m in measured]
    colours = ["#d62728" if m.spec.locked else "#1f77b4" for m in measured]
    for s in allocation.statistics:  # issue 16: statistics and discoveries in green
        values.append(getattr(s.cost, field) or 0.0)
        names.append(s.name)
        colours.append("#d62728" if s.statistic.table.locked else "#2ca02c")
    for d in allocation.discoveries:
        values.append(getattr(d.mechanism.cost, field) or 0.0)
        names.append(f"discover {d.column}")
        colours.append("#2ca02c")
    whole = sum(values)
    shares = [round(100 * v / whole, 2) if whole > 0 else 0.0 for v in values]
    figure = go.Figure(
        go.Bar(
            x=names,
            y=shares,
            marker_color=colours,
            hovertemplate="%{x}: %{y:.2f}% of the " + unit + "<extra></extra>",
        )
    )
    # Margins fixed from the labels, no automargin: Plotly's margin search drew the chart
    # several times over in the browser whenever it changed (issue 37.9).
    x_axis, below_px = column_ticks(names)
    figure.update_layout(
        title=f"Budget split (share of the {unit}, in %; red = locked, green = statistic)",
        xaxis={**x_axis, "automargin": False},
        yaxis={"title": f"% of the {unit}", "automargin": False, "rangemode": "tozero"},
        height=PLOT_PX + 60 + below_px,
        margin={"l": 70, "r": 10, "t": 60, "b": below_px},
    )
    return figure


def moe_against_budget(curve: MoeCurve) -> go.Figure:
    """Margin of error per cell against the total budget, one line per table, log-log."""
    unit = curve.symbol
    figure = go.Figure()
    for name, values in curve.moe.items():
        figure.add_trace(go.Scatter(x=curve.budgets, y=values, mode="lines", name=name))
    figure.add_vline(
        x=curve.current,
        line_dash="dash",
        annotation_text=f"your {unit} = {curve.current:.3g}",
        annotation_position="top",
    )
    figure.update_layout(
        title=f"Margin of error per cell against the total {unit}",
        xaxis=log_axis(f"total {unit}", curve.budgets),
        yaxis=log_axis("margin of error (counts)", [v for vs in curve.moe.values() for v in vs]),
        **_LAYOUT,
    )
    return figure


def accountants(bounds: Sequence[AccountantBound], chosen: str) -> go.Figure:
    """The ε each accountant certifies for the same noise: shorter bar = tighter."""
    usable = [b for b in bounds if b.epsilon is not None]
    best = min((b.epsilon for b in usable if b.epsilon is not None), default=None)
    figure = go.Figure(
        go.Bar(
            y=[b.accountant for b in usable],
            x=[b.epsilon for b in usable],
            orientation="h",
            marker_color=["#2ca02c" if b.epsilon == best else "#7f7f7f" for b in usable],
            text=[f"{b.epsilon:.4g}" for b in usable],
            hovertext=[b.note for b in usable],
        )
    )
    figure.update_layout(
        title=f"Same noise, different accountants (plan uses {chosen}; green = tightest)",
        xaxis_title="ε certified for the whole release",
        yaxis=category_axis(),
        **_LAYOUT,
    )
    return figure


def epsilon_delta(deltas: Sequence[float], epsilons: Sequence[float], delta: float) -> go.Figure:
    figure = go.Figure(go.Scatter(x=list(deltas), y=list(epsilons), mode="lines"))
    figure.add_vline(x=delta, line_dash="dash", annotation_text=f"your δ = {delta:.0e}")
    figure.update_layout(
        title="ε(δ) implied by the plan's ρ (zCDP)",
        xaxis=log_axis("δ", deltas),
        yaxis_title="ε",
        **_LAYOUT,
    )
    return figure


def scenarios(rows: Sequence[dict[str, object]], labels: Sequence[str]) -> go.Figure:
    tables = [r for r in rows if r["table"] != "total ε"]
    figure = go.Figure(
        [
            go.Bar(name=label, x=[r["table"] for r in tables], y=[r[label] for r in tables])
            for label in labels
        ]
    )
    figure.update_layout(
        barmode="group",
        title="Margin of error per cell, by scenario",
        xaxis=category_axis(),
        **_LAYOUT,
    )
    return figure


def one_way(labels: Sequence[str], series: dict[str, np.ndarray], title: str) -> go.Figure:
    """Bars of several series (true, noisy, released) over a table's cells, codes as
    categories. Up to `LONG_DOMAIN` cells: columns in domain order. More (31 PUMAs, 3,143
    counties): horizontal bars sorted by the last series, largest on top, the first
    `MAX_BARS` of them, so that every label is readable."""
    if len(labels) <= LONG_DOMAIN:
        figure = go.Figure(
            [go.Bar(name=name, x=list(labels), y=values) for name, values in series.items()]
        )
        x_axis, below_px = column_ticks(labels)  # long labels get a band of their own
        figure.update_layout(
            barmode="group",
            title=title,
            xaxis={**x_axis, "automargin": True},
            height=PLOT_PX + 60 + below_px,
            margin={"l": 40, "r": 10, "t": 60, "b": below_px},  # room for a slanted first label
        )
        return figure
    order = np.argsort(-np.asarray(list(series.values())[-1]), kind="stable")[:MAX_BARS]
    shown = [labels[i] for i in order]
    figure = go.Figure(
        [
            go.Bar(name=name, y=shown, x=np.asarray(values)[order], orientation="h")
            for name, values in series.items()
        ]
    )
    sort_name = list(series)[-1]
    y_axis, left_px = row_ticks(shown)
    figure.update_layout(
        barmode="group",
        title=f"{title} — the {len(shown)} largest of {len(labels):,} by {sort_name}",
        yaxis={**y_axis, "automargin": True},
        height=120 + ROW_HEIGHT * len(series) * len(shown),
        margin={"l": left_px, "r": 10, "t": 40, "b": 10},
    )
    return figure
