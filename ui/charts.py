"""Plotly figures for the pages. They draw numbers the library computed; no arithmetic here
beyond shaping them for a chart."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dprelease.accounting.allocation import Allocation
from dprelease.accounting.tradeoffs import AccountantBound, MoeCurve

_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def budget_split(allocation: Allocation) -> go.Figure:
    """Each table's share of the budget (ε, or ρ under zCDP)."""
    unit = "ρ" if allocation.accounting == "zcdp" else "ε"
    zcdp = allocation.accounting == "zcdp"
    values = [(t.rho if zcdp else t.epsilon) or 0.0 for t in allocation.tables]
    names = [t.name for t in allocation.tables]
    colours = ["#d62728" if t.spec.locked else "#1f77b4" for t in allocation.tables]
    for s in allocation.statistics:  # issue 16: statistics and discoveries in green
        values.append((s.cost.rho if zcdp else s.cost.epsilon) or 0.0)
        names.append(s.name)
        colours.append("#d62728" if s.statistic.table.locked else "#2ca02c")
    for d in allocation.discoveries:
        values.append((d.mechanism.cost.rho if zcdp else d.mechanism.cost.epsilon) or 0.0)
        names.append(f"discover {d.column}")
        colours.append("#2ca02c")
    figure = go.Figure(
        go.Bar(
            x=names,
            y=values,
            marker_color=colours,
            hovertemplate="%{x}: " + unit + " = %{y:.4g}<extra></extra>",
        )
    )
    figure.update_layout(
        title=f"Budget split ({unit} per table; red = locked, green = statistic)",
        yaxis_title=unit,
        **_LAYOUT,
    )
    return figure


def moe_against_budget(curve: MoeCurve) -> go.Figure:
    """Margin of error per cell against the total budget, one line per table, log-log."""
    unit = "ρ" if curve.unit == "rho" else "ε"
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
        xaxis={"type": "log", "title": f"total {unit}"},
        yaxis={"type": "log", "title": "margin of error (counts)"},
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
        **_LAYOUT,
    )
    return figure


def epsilon_delta(deltas: Sequence[float], epsilons: Sequence[float], delta: float) -> go.Figure:
    figure = go.Figure(go.Scatter(x=list(deltas), y=list(epsilons), mode="lines"))
    figure.add_vline(x=delta, line_dash="dash", annotation_text=f"your δ = {delta:.0e}")
    figure.update_layout(
        title="ε(δ) implied by the plan's ρ (zCDP)",
        xaxis={"type": "log", "title": "δ"},
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
    figure.update_layout(barmode="group", title="Margin of error per cell, by scenario", **_LAYOUT)
    return figure


def one_way(labels: Sequence[str], series: dict[str, np.ndarray], title: str) -> go.Figure:
    """Bars of true, noisy and released counts for a one-way table (first 60 cells)."""
    figure = go.Figure(
        [go.Bar(name=name, x=list(labels[:60]), y=values[:60]) for name, values in series.items()]
    )
    figure.update_layout(barmode="group", title=title, **_LAYOUT)
    return figure


def heatmaps(
    rows: Sequence[str], columns: Sequence[str], panels: dict[str, np.ndarray], title: str
) -> go.Figure:
    """Side-by-side heatmaps of a two-way table (true, released, error)."""
    figure = make_subplots(rows=1, cols=len(panels), subplot_titles=list(panels))
    for i, (name, matrix) in enumerate(panels.items(), start=1):
        figure.add_trace(
            go.Heatmap(
                z=matrix,
                x=list(columns),
                y=list(rows),
                coloraxis="coloraxis2" if name.startswith("error") else "coloraxis",
                hovertemplate="%{y} × %{x}: %{z:.1f}<extra>" + name + "</extra>",
            ),
            row=1,
            col=i,
        )
    figure.update_layout(
        title=title,
        coloraxis={"colorscale": "Blues", "colorbar": {"x": 1.0}},
        coloraxis2={"colorscale": "RdBu", "cmid": 0, "colorbar": {"x": 1.08}},
        **{**_LAYOUT, "height": 460},
    )
    return figure


def small_multiples(
    facets: Sequence[str],
    rows: Sequence[str],
    columns: Sequence[str],
    cubes: np.ndarray,
    title: str,
) -> go.Figure:
    """Error heatmaps of the last two columns, one panel per value of the first columns."""
    n = len(facets)
    cols = min(4, n)
    grid_rows = (n + cols - 1) // cols
    figure = make_subplots(rows=grid_rows, cols=cols, subplot_titles=list(facets))
    for i in range(n):
        figure.add_trace(
            go.Heatmap(
                z=cubes[i],
                x=list(columns),
                y=list(rows),
                coloraxis="coloraxis",
                hovertemplate="%{y} × %{x}: %{z:.1f}<extra></extra>",
            ),
            row=i // cols + 1,
            col=i % cols + 1,
        )
    figure.update_layout(
        title=title,
        coloraxis={"colorscale": "RdBu", "cmid": 0},
        **{**_LAYOUT, "height": 260 * grid_rows + 80},
    )
    return figure
