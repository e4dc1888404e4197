"""Plotly figures for the Local DP page: numbers from `dprelease.ldp`, shaped for a chart."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dprelease.ldp import Simulation
from ui.axes import log_axis
from ui.charts import one_way

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
        xaxis=log_axis("ε per respondent", epsilons),
        yaxis=log_axis("variance (counts²)", [v for vs in curves.values() for v in vs]),
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
        xaxis=log_axis("margin of error (% of respondents)", [100 * s for s in shares]),
        yaxis=log_axis("respondents n", [v for vs in needed.values() for v in vs]),
        **_LAYOUT,
    )
    return figure


def simulation_bars(result: Simulation, labels: Sequence[str] | None = None) -> go.Figure:
    """CONFIDENTIAL: true counts against the raw and projected estimates; `labels` are what
    to show for the codes ("label (code)"), the simulation's own code texts by default."""
    return one_way(
        list(labels or result.labels),
        {
            "true (confidential)": np.asarray(result.true_counts, dtype=float),
            "raw estimate": np.asarray(result.estimated, dtype=float),
            "projected (sum = n)": np.asarray(result.projected, dtype=float),
        },
        f"{result.protocol} at ε = {result.epsilon:g}: estimates against the truth",
    )
