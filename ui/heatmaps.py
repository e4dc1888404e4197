"""Heatmaps of two-way tables and small multiples of three-way ones, sized from their labels
(`ui/chart_space.py`): long row labels get a left margin of their own, column labels a band
below the plot, colour bars a place where no panel or label is, and every panel keeps
ROW_HEIGHT pixels per row whatever the labels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ui.chart_space import (
    CHAR_PX,
    LINE_PX,
    REFERENCE_PLOT_PX,
    TICK_PAD_PX,
    column_ticks,
    row_ticks,
    title_lines,
    wrap_title,
)

MAX_HEATMAP_ROWS = 300  # rows of a heatmap (the page scrolls it)
ROW_HEIGHT = 16  # pixels per category row: labels never overlap
MIN_PANEL_PX = 140  # a panel of few rows is still this tall
TITLE_PX = 60  # the figure's title
BAR_PX = 64  # a horizontal colour bar with its numbers
BAR_THICKNESS = 12
RIGHT_BAR_PX = 90  # a vertical colour bar with its numbers, right of the plot
PANEL_GAP = 0.025  # between panels side by side (fraction of the plot's width)
MAX_FACET_COLUMNS = 4


def _domains(count: int, gap: float = PANEL_GAP) -> list[tuple[float, float]]:
    width = (1 - gap * (count - 1)) / count
    return [(i * (width + gap), i * (width + gap) + width) for i in range(count)]


def _axis_name(kind: str, index: int) -> str:
    return kind if index == 1 else f"{kind}{index}"


def _panel_title(text: str, x: tuple[float, float], top: float) -> dict[str, Any]:
    return {
        "text": text,
        "x": (x[0] + x[1]) / 2,
        "y": top,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 13},
    }


def heatmaps(
    rows: Sequence[str],
    columns: Sequence[str],
    panels: dict[str, np.ndarray],
    title: str,
) -> go.Figure:
    """Side-by-side heatmaps of a two-way table (true, released, error) sharing their row
    labels, drawn once, on the left. The longer of the two domains runs down the page (the
    figure grows with it), cut at MAX_HEATMAP_ROWS. Each colour scale has a horizontal colour
    bar under the panels that use it, below the column labels: two bars never meet."""
    if len(columns) > len(rows):
        rows, columns = columns, rows
        panels = {name: matrix.T for name, matrix in panels.items()}
    if len(rows) > MAX_HEATMAP_ROWS:
        title += f" (the first {MAX_HEATMAP_ROWS} of {len(rows):,} rows)"
        rows = rows[:MAX_HEATMAP_ROWS]
        panels = {name: matrix[:MAX_HEATMAP_ROWS] for name, matrix in panels.items()}
    y_axis, left_px = row_ticks(rows)
    x_axis, below_px = column_ticks(columns, len(panels))
    plot_px = max(MIN_PANEL_PX * 2, ROW_HEIGHT * len(rows))
    top_px = TITLE_PX + LINE_PX
    domains = _domains(len(panels))
    figure = go.Figure()
    scales: dict[str, list[tuple[float, float]]] = {}
    titles = []
    for i, ((name, matrix), x) in enumerate(zip(panels.items(), domains, strict=True), start=1):
        scale = "coloraxis2" if name.startswith("error") else "coloraxis"
        scales.setdefault(scale, []).append(x)
        figure.add_trace(
            go.Heatmap(
                z=matrix,
                x=list(columns),
                y=list(rows),
                coloraxis=scale,
                xaxis=_axis_name("x", i),
                yaxis=_axis_name("y", i),
                hovertemplate="%{y} × %{x}: %{z:.1f}<extra>" + name + "</extra>",
            )
        )
        figure.layout[_axis_name("xaxis", i)] = {
            **x_axis,
            "domain": list(x),
            "anchor": _axis_name("y", i),
            "automargin": False,
        }
        figure.layout[_axis_name("yaxis", i)] = {
            **y_axis,
            "anchor": _axis_name("x", i),
            "showticklabels": i == 1,  # one set of row labels, on the left
            "automargin": i == 1,
            **({} if i == 1 else {"matches": "y"}),
        }
        titles.append(_panel_title(name, x, 1.0))
    bar_y = -(below_px + TICK_PAD_PX) / plot_px  # under the column labels
    for scale, spans in scales.items():
        low, high = min(s[0] for s in spans), max(s[1] for s in spans)
        figure.layout[scale] = {
            "colorscale": "RdBu" if scale == "coloraxis2" else "Blues",
            **({"cmid": 0} if scale == "coloraxis2" else {}),
            "colorbar": {
                "orientation": "h",
                "x": (low + high) / 2,
                "xanchor": "center",
                "len": (high - low) * 0.9,
                "y": bar_y,
                "yanchor": "top",
                "thickness": BAR_THICKNESS,
            },
        }
    figure.update_layout(
        title=title,
        annotations=titles,
        height=top_px + plot_px + below_px + BAR_PX,
        margin={"l": left_px, "r": 20, "t": top_px, "b": below_px + BAR_PX},
    )
    return figure


def small_multiples(
    facets: Sequence[str],
    rows: Sequence[str],
    columns: Sequence[str],
    cubes: np.ndarray,
    title: str,
) -> go.Figure:
    """Error heatmaps of the last two columns, one titled panel per value of the first
    columns, up to MAX_FACET_COLUMNS side by side. Row labels are drawn once per grid row (on
    the left), column labels once per grid column (under its lowest panel), and every panel
    keeps ROW_HEIGHT pixels per row: long labels widen the margins, never shrink the panels."""
    n = len(facets)
    cols = min(MAX_FACET_COLUMNS, n)
    grid_rows = math.ceil(n / cols)
    rows = rows[:MAX_HEATMAP_ROWS]
    y_axis, left_px = row_ticks(rows)
    x_axis, below_px = column_ticks(columns, cols)
    chars = int(REFERENCE_PLOT_PX / cols / CHAR_PX)
    titles = [wrap_title(f, chars) for f in facets]
    head_px = LINE_PX * title_lines(titles) + 6
    panel_px = max(MIN_PANEL_PX, ROW_HEIGHT * len(rows))
    # the lowest panel of each grid column carries the column labels: the last grid row, and
    # the one above it for the columns that the (partial) last row leaves empty
    lowest = {c: max(i for i in range(n) if i % cols == c) // cols for c in range(cols)}
    labelled_rows = set(lowest.values())
    spans, at = [], 0.0
    for r in range(grid_rows):
        at += head_px
        spans.append((at, at + panel_px))
        at += panel_px + (below_px if r in labelled_rows else TICK_PAD_PX)
    plot_px = at
    x_domains = _domains(cols)
    figure = go.Figure()
    annotations = []
    for i in range(n):
        r, c = divmod(i, cols)
        k = i + 1
        top, bottom = spans[r]
        y_domain = [1 - bottom / plot_px, 1 - top / plot_px]
        figure.add_trace(
            go.Heatmap(
                z=cubes[i][: len(rows)],
                x=list(columns),
                y=list(rows),
                coloraxis="coloraxis",
                xaxis=_axis_name("x", k),
                yaxis=_axis_name("y", k),
                hovertemplate=f"{facets[i]}<br>" + "%{y} × %{x}: %{z:.1f}<extra></extra>",
            )
        )
        figure.layout[_axis_name("xaxis", k)] = {
            **x_axis,
            "domain": list(x_domains[c]),
            "anchor": _axis_name("y", k),
            "showticklabels": r == lowest[c],
            "automargin": False,
            **({} if k == 1 else {"matches": "x"}),
        }
        figure.layout[_axis_name("yaxis", k)] = {
            **y_axis,
            "domain": y_domain,
            "anchor": _axis_name("x", k),
            "showticklabels": c == 0,
            "automargin": c == 0,
            **({} if k == 1 else {"matches": "y"}),
        }
        annotations.append(_panel_title(titles[i], x_domains[c], y_domain[1]))
    figure.update_layout(
        title=title,
        annotations=annotations,
        coloraxis={
            "colorscale": "RdBu",
            "cmid": 0,
            "colorbar": {
                "x": 1.0,
                "xanchor": "left",
                "xpad": 16,
                "y": 1.0,
                "yanchor": "top",
                "len": min(1.0, 360 / plot_px),
                "thickness": BAR_THICKNESS,
            },
        },
        height=TITLE_PX + plot_px + TICK_PAD_PX,
        margin={"l": left_px, "r": RIGHT_BAR_PX, "t": TITLE_PX, "b": TICK_PAD_PX},
    )
    return figure
