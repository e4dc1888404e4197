"""A statistic's public bounds as the plan writes them: a finite number, and [lo, hi] with
lo < hi (shared by the statistic specs and the regression/PCA specs)."""

from __future__ import annotations

import math

from dprelease.errors import PlanError, quote

BOUND_LIMIT = 1e15  # beyond this, fixed-point sums no longer fit 64-bit integers


def parse_number(value: object, what: str) -> float:
    """A finite number of at most BOUND_LIMIT in size (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanError(f"{what} must be a number, got {quote(value)}.")
    if not math.isfinite(value) or abs(value) > BOUND_LIMIT:
        raise PlanError(f"{what} must be a finite number of at most 1e15 in size, got {value!r}.")
    return float(value)


def parse_bounds(raw: object, what: str) -> tuple[float, float]:
    """[lo, hi], two numbers with lo < hi."""
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        raise PlanError(f"{what} must be two numbers [lo, hi], got {quote(raw)}.")
    lo, hi = parse_number(raw[0], f"{what}[0]"), parse_number(raw[1], f"{what}[1]")
    if not lo < hi:
        raise PlanError(f"{what} must have lo < hi, got [{lo:g}, {hi:g}].")
    return lo, hi
