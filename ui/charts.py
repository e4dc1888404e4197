"""Plotly figures for the pages. They draw numbers the library computed; no arithmetic here
beyond shaping them for a chart."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dprelease.accounting.allocation import Allocation
from dprelease.accounting.tradeoffs import AccountantBound, MoeCurve
from ui.axes import CATEGORY, category_axis, log_axis

_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}
LONG_DOMAIN = 25  # more cells than this: sorted horizontal bars instead of columns
MAX_BARS = 60  # bars shown of a long domain (the largest)
MAX_HEATMAP_ROWS = 300  # rows of a heatmap (the page scrolls it)
ROW_HEIGHT = 16  # pixels per category row: labels never overlap


def budget_split(allocation: Allocation) -> go.Figure:
    """Each measurement's share of the budget (ε, or ρ under zCDP; under approx with
    strategy auto, Δ₂²/σ², its part of the one Gaussian mechanism)."""
    zcdp = allocation.accounting == "zcdp"
    gaussian_set = allocation.accounting == "approx" and allocation.derived
    unit = "ρ" if zcdp else "Δ₂²/σ²" if gaussian_set else "ε"
    measured = allocation.measurements
    if gaussian_set:
        values = [m.sensitivity.l2_squared / m.noise.scale**2 for m in measured]
    else:
        values = [(m.rho if zcdp else m.epsilon) or 0.0 for m in measured]
    names = [m.name for m in measured]
    colours = ["#d62728" if m.spec.locked else "#1f77b4" for m in measured]
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
        title=f"Budget split ({unit} per measurement; red = locked, green = statistic)",
        xaxis=category_axis(),
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
        figure.update_layout(barmode="group", title=title, xaxis=category_axis(), **_LAYOUT)
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
    figure.update_layout(
        barmode="group",
        title=f"{title} — the {len(shown)} largest of {len(labels):,} by {sort_name}",
        yaxis=category_axis(autorange="reversed"),
        **{**_LAYOUT, "height": 120 + ROW_HEIGHT * len(series) * len(shown)},
    )
    return figure


def _heatmap_axes(figure: go.Figure, rows: int) -> None:
    """Categorical axes on every panel; the first row at the top, as in the table."""
    figure.update_xaxes(**CATEGORY)
    figure.update_yaxes(**CATEGORY, autorange="reversed")
    figure.update_layout(height=max(460, 140 + ROW_HEIGHT * rows))


def heatmaps(
    rows: Sequence[str],
    columns: Sequence[str],
    panels: dict[str, np.ndarray],
    title: str,
) -> go.Figure:
    """Side-by-side heatmaps of a two-way table (true, released, error) sharing their
    row labels, which are drawn once, on the left. The longer of the two domains runs down
    the page (the figure grows with it; the page scrolls it), cut at `MAX_HEATMAP_ROWS`."""
    if len(columns) > len(rows):
        rows, columns = columns, rows
        panels = {name: matrix.T for name, matrix in panels.items()}
    if len(rows) > MAX_HEATMAP_ROWS:
        title += f" (the first {MAX_HEATMAP_ROWS} of {len(rows):,} rows)"
        rows = rows[:MAX_HEATMAP_ROWS]
        panels = {name: matrix[:MAX_HEATMAP_ROWS] for name, matrix in panels.items()}
    figure = make_subplots(
        rows=1,
        cols=len(panels),
        subplot_titles=list(panels),
        shared_yaxes=True,
        horizontal_spacing=0.03,
    )
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
        **_LAYOUT,
    )
    _heatmap_axes(figure, len(rows))
    return figure


def small_multiples(
    facets: Sequence[str],
    rows: Sequence[str],
    columns: Sequence[str],
    cubes: np.ndarray,
    title: str,
) -> go.Figure:
    """Error heatmaps of the last two columns, one labelled panel per value of the first
    columns; panels in a row share their row labels, drawn once on the left."""
    n = len(facets)
    cols = min(4, n)
    grid_rows = (n + cols - 1) // cols
    rows = rows[:MAX_HEATMAP_ROWS]
    figure = make_subplots(
        rows=grid_rows,
        cols=cols,
        subplot_titles=[_short(f) for f in facets],
        shared_yaxes=True,
        horizontal_spacing=0.03,
        vertical_spacing=min(0.3 / grid_rows, 0.08),
    )
    for i in range(n):
        figure.add_trace(
            go.Heatmap(
                z=cubes[i][: len(rows)],
                x=list(columns),
                y=list(rows),
                coloraxis="coloraxis",
                hovertemplate=f"{_short(facets[i])}<br>" + "%{y} × %{x}: %{z:.1f}<extra></extra>",
            ),
            row=i // cols + 1,
            col=i % cols + 1,
        )
    figure.update_layout(title=title, coloraxis={"colorscale": "RdBu", "cmid": 0}, **_LAYOUT)
    _heatmap_axes(figure, len(rows) * grid_rows)
    figure.update_layout(height=max(figure.layout.height, 260 * grid_rows + 80))
    return figure


def _short(text: str, limit: int = 40) -> str:
    """A panel title that fits over its panel."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
