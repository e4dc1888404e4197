"""Charts and static tables for the Risk page (CONFIDENTIAL content: nothing downloadable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from dprelease.risk.classes import KAnonymity, class_sizes_table
from dprelease.risk.command import reconstruction_lines
from ui.axes import category_axis
from ui.markdown import md, static_table
from ui.state import Workspace

T = TypeVar("T")
AREAS_CAP = "beyond the areas to try"  # the page's words for the CLI's --max-areas


def seed(ws: Workspace, key: str, default: object, allowed: Callable[[Any], bool]) -> None:
    """Give widget `key` the choice the Risk page last had. Streamlit forgets the widgets of
    a page that is not shown, so the choices live in the workspace; written into Session
    State before the widget is drawn, which then gets no default (both make Streamlit warn).
    A kept choice the data no longer allows (a column gone) falls back to `default`."""
    value = st.session_state.get(key, ws.memo.risk_inputs.get(key, default))
    st.session_state[key] = value if allowed(value) else default


def keep(ws: Workspace, key: str, value: T) -> T:
    """Remember a widget's value for the next visit of the page (see `seed`)."""
    ws.memo.risk_inputs[key] = value
    return value


NO_MODE_BAR = {"displayModeBar": False}  # its "download as PNG" would let the picture leave


def class_size_chart(k: KAnonymity) -> None:
    sizes = class_sizes_table(k)
    shown = sorted(sizes)[:60]
    figure = go.Figure(
        go.Bar(
            x=[str(s) for s in shown],
            y=[sizes[s] * s for s in shown],
            marker_color=["#d62728" if s < k.chosen_k else "#1f77b4" for s in shown],
        )
    )
    figure.update_layout(
        title=f"Records by the size of their class (red: below k = {k.chosen_k})",
        xaxis=category_axis("class size (records sharing the QI values)"),
        yaxis_title="records",
        height=320,
        margin={"t": 40, "b": 40},
    )
    st.plotly_chart(figure, key="risk_class_sizes", config=NO_MODE_BAR)


def reconstruction_table(result: dict[str, Any]) -> None:
    rows = []
    for key in ("exact", "dp"):
        r = result[key]
        if r is None:
            continue
        rows.append(
            {
                "tables": r["tables"],
                "ε": "—" if r["epsilon"] is None else f"{r['epsilon']:.4g}",
                "records reproduced exactly": f"{r['share_reproduced']:.1%}",
                "of real records": f"{r['share_of_real_records']:.1%}",
                "of rebuilt records": f"{r['share_of_rebuilt_records']:.1%}",
                "areas with one solution": r["areas_unique_solution"] if key == "exact" else "—",
            }
        )
    static_table(rows)  # static: no download button
    st.caption("\n\n".join(md(line) for line in reconstruction_lines(result, AREAS_CAP)))
