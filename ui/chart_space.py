"""Room for real labels in a chart, in pixels: long PUMA names down the side, nine race labels
along the bottom. Plotly takes the room its labels need out of the figure's fixed height and
width (its `automargin`), so that a chart of long labels used to keep a 60 px sliver of plot;
here each figure is sized from its labels instead: the plot keeps its height and the labels
get margins of their own.

Widths are estimated from the characters (CHAR_PX at Plotly's 12 px font, an upper bound for
ordinary text); a label longer than MAX_TICK_CHARS is shortened on the axis with "…" and shown
in full on hover (the axis keeps the full text as its category, so two labels that start
alike stay two cells).
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from typing import Any

CHAR_PX = 7.5  # width of one character of tick text (12 px font), rounded up
LINE_PX = 18  # height of one line of title text
MAX_TICK_CHARS = 40  # longer tick labels are shortened (full text on hover)
TICK_PAD_PX = 12  # between tick labels and the plot, or the next thing
REFERENCE_PLOT_PX = 900  # the plot's width at a 1400 px window (wide layout, sidebar open)
FLAT_TICK_PX = 22  # height of a row of horizontal tick labels


def short(text: str, limit: int = MAX_TICK_CHARS) -> str:
    """A label that fits its axis in `limit` characters: its start, "…", and its code when it
    ends in one ("Los Angeles County (Central)--LA… (03701)"), so that PUMAs of one county
    stay apart; else its first `limit` − 1 characters and "…"."""
    if len(text) <= limit:
        return text
    code = re.search(r" \([^()]{1,12}\)$", text)
    if code is not None and len(code.group()) <= limit // 2:
        return text[: limit - len(code.group()) - 1].rstrip() + "…" + code.group()
    return text[: limit - 1] + "…"


def text_px(labels: Sequence[str]) -> int:
    """The width of the longest shortened label, in pixels."""
    return math.ceil(CHAR_PX * max((len(short(t)) for t in labels), default=1))


def category_ticks(labels: Sequence[str]) -> dict[str, Any]:
    """A categorical axis over `labels`, in this order, each written short (full on hover)."""
    values = list(labels)
    return {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": values,
        "tickmode": "array",
        "tickvals": values,
        "ticktext": [short(t) for t in values],
    }


def row_ticks(labels: Sequence[str]) -> tuple[dict[str, Any], int]:
    """A y axis of `labels` (the first at the top) and the left margin its labels need."""
    axis = {**category_ticks(labels), "autorange": "reversed"}  # first row at the top
    return axis, text_px(labels) + TICK_PAD_PX


def column_ticks(labels: Sequence[str], panels: int = 1) -> tuple[dict[str, Any], int]:
    """An x axis of `labels` under one of `panels` side-by-side plots, and the height its
    labels need: flat when they all fit side by side at REFERENCE_PLOT_PX, else upright."""
    axis = category_ticks(labels)
    slot = REFERENCE_PLOT_PX / max(panels, 1) / max(len(labels), 1)
    if text_px(labels) + TICK_PAD_PX <= slot:
        axis["tickangle"] = 0
        return axis, FLAT_TICK_PX + TICK_PAD_PX
    axis["tickangle"] = -90
    return axis, text_px(labels) + TICK_PAD_PX


def wrap_title(text: str, chars: int, lines: int = 2) -> str:
    """A panel title in at most `lines` lines of `chars` characters (joined by <br>)."""
    chars = max(chars, 8)
    wrapped = textwrap.wrap(text, chars) or [""]
    if len(wrapped) > lines:
        wrapped = [*wrapped[: lines - 1], short(" ".join(wrapped[lines - 1 :]), chars)]
    return "<br>".join(short(line, chars) for line in wrapped)


def title_lines(titles: Sequence[str]) -> int:
    """How many lines the tallest wrapped title takes."""
    return max((t.count("<br>") + 1 for t in titles), default=1)
