"""One bisection for every monotone search in the library (scales, budgets, conversions).

`threshold(flips, low, high)` narrows [low, high] around the point where a monotone predicate
turns from False to True, until the two ends are adjacent floats. Callers keep the end that is
safe for them: `high` when True means "enough noise", `low` when True means "too much budget".
"""

from __future__ import annotations

import math
from collections.abc import Callable


def threshold(
    flips: Callable[[float], bool], low: float, high: float, limit: float = math.inf
) -> tuple[float, float]:
    """(low, high) with flips(low) False and flips(high) True, as close as floats allow.

    `high` is doubled first until flips(high) holds; if that passes `limit`, the returned
    high is inf (no such point below the limit).
    """
    while not flips(high):
        low, high = high, 2 * high if high > 0 else 1.0
        if high > limit:
            return low, math.inf
    for _ in range(2000):  # bisection ends on adjacent floats long before this
        middle = (low + high) / 2
        if middle <= low or middle >= high:
            break
        if flips(middle):
            high = middle
        else:
            low = middle
    return low, high
