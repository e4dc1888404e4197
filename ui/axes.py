"""Chart axes that read right: codes on categorical axes, log axes with whole tick numbers.

Plotly guesses an axis's type from its values, so codes such as STATE "01".."56" or SEX 1, 2
became a numeric axis (10–50, or 0.5–2.5 on a heatmap); every axis of codes, labels or names
says `type: category`. On a log axis spanning less than a decade or two, Plotly labels the
minor ticks with their first digit only ("2", "3" for 200, 300); `log_axis` sets the ticks
itself, on 1-2-5 steps, each written out in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

CATEGORY: dict[str, Any] = {"type": "category", "automargin": True}
MANTISSAS_BY_SPAN = ((3, (1, 2, 5)), (6, (1,)))  # decades spanned → tick mantissas


def category_axis(title: str | None = None, **extra: Any) -> dict[str, Any]:
    """An axis of codes or names: every value a category, in the order given."""
    axis = {**CATEGORY, **extra}
    if title is not None:
        axis["title"] = title
    return axis


def tick_text(value: float) -> str:
    """A tick label written out in full: 200, 1,000, 0.05; 1e-10 and 2e+07 beyond."""
    if 1e-3 <= value < 1e6:
        return f"{value:,.6g}"
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def log_ticks(values: Iterable[float]) -> tuple[list[float], list[str]]:
    """Tick positions on 1-2-5 steps (powers of ten alone over wide spans, every few powers
    over very wide ones) covering the positive `values`, and their full labels."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return [], []
    low, high = min(positive), max(positive)
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    span = math.ceil(math.log10(high / low) - 1e-9)  # decades the values really span
    mantissas: tuple[int, ...] = next((m for s, m in MANTISSAS_BY_SPAN if span <= s), (1,))
    step = max(1, math.ceil(span / 8))  # at most about eight labelled powers of ten
    ticks = [
        m * 10.0**k
        for k in range(first, last + 1)
        if mantissas != (1,) or (k - first) % step == 0
        for m in mantissas
    ]
    inside = [t for t in ticks if low / 1.001 <= t <= high * 1.001]
    if len(inside) < 2:  # a narrow range: its two ends, to two significant digits
        inside = sorted({float(f"{low:.2g}"), float(f"{high:.2g}")})
    return inside, [tick_text(t) for t in inside]


def log_axis(title: str, values: Iterable[float]) -> dict[str, Any]:
    """A log axis whose ticks cover `values`, labelled in full (never "3, 2" above 100)."""
    ticks, texts = log_ticks(values)
    axis: dict[str, Any] = {"type": "log", "title": title}
    if ticks:
        axis.update(tickmode="array", tickvals=ticks, ticktext=texts)
    return axis
