"""Plotly figures for the Local DP page: numbers from `dprelease.ldp`, shaped for a chart."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from dprelease.ldp import Simulation

_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def _central_style(name: str) -> dict[str, object]:
    return {"dash": "dash", "color": "black"} if name == "central" else {}


def variance_against_epsilon(
    epsilons: Sequence[float], curves: dict[str, list[float]], chosen: float, n: int
) -> go.Figure:
    figure = go.Figure()
    for name, values in curves.items():
        label = "central (discrete Laplace)" if name == "central" else name
        figure.add_trace(
            go.Scatter(
                x=list(epsilons), y=values, mode="lines", name=label, line=_central_style(name)
            )
        )
    figure.add_vline(x=chosen, line_dash="dot", annotation_text=f"your ε = {chosen:g}")
    figure.update_layout(
        title=f"Variance of a count near 0 against ε (n = {n:,})",
        xaxis={"type": "log", "title": "ε per respondent"},
        yaxis={"type": "log", "title": "variance (counts²)"},
        **_LAYOUT,
    )
    return figure


def respondents_for_target(
    shares: Sequence[float], needed: dict[str, list[float]], target: float
) -> go.Figure:
    figure = go.Figure()
    for name, values in needed.items():
        label = "central (discrete Laplace)" if name == "central" else name
        figure.add_trace(
            go.Scatter(
                x=[100 * s for s in shares],
                y=values,
                mode="lines",
                name=label,
                line=_central_style(name),
            )
        )
    figure.add_vline(x=100 * target, line_dash="dot", annotation_text=f"±{target:.2%}")
    figure.update_layout(
        title="Respondents needed for a margin of error on a share",
        xaxis={"type": "log", "title": "margin of error (% of respondents)"},
        yaxis={"type": "log", "title": "respondents n"},
        **_LAYOUT,
    )
    return figure


def simulation_bars(result: Simulation) -> go.Figure:
    """CONFIDENTIAL: true counts against the raw and projected estimates."""
    labels = list(result.labels)
    figure = go.Figure()
    figure.add_trace(go.Bar(x=labels, y=result.true_counts, name="true (confidential)"))
    figure.add_trace(go.Bar(x=labels, y=result.estimated, name="raw estimate"))
    figure.add_trace(go.Bar(x=labels, y=result.projected, name="projected (sum = n)"))
    figure.update_layout(
        barmode="group",
        title=f"{result.protocol} at ε = {result.epsilon:g}: estimates against the truth",
        **_LAYOUT,
    )
    return figure
