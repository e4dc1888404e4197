"""A table's survey weight (issue 37.8): `survey_weight: {column: C, bounds: [0, W]}`.

A weighted table releases, per cell, the sum of its rows' weights instead of their number.
Fixed point, as a statistic's sum (`stats/sums.py`) with resolution 1: each weight is read as
a number, clamped into [lo, W] and rounded to the nearest whole number (half to even), so the
cell totals are integers and the noise is drawn on them exactly as on counts. A row whose
weight is missing or not a number counts with weight 0 (it stays in the table, adding
nothing; it is not a left-out row). The bounds are whole numbers with
0 ≤ lo < W: survey weights are whole numbers in the ACS (PWGTP); finer weights lose at most
1/2 each to the rounding.

Sensitivity: one row moves a weighted cell total by at most W (add/remove: W; a row moving
between cells under `replace`: W out of one, W into another), so a weighted table's L1 and
L2 are W times a count table's: `TableSpec.sensitivity_factor`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dprelease.errors import PlanError, quote

SURVEY_WEIGHT_KEYS = ("column", "bounds")
MAX_WEIGHT = 2**40  # a weight bound beyond it is no survey weight (and sums must stay exact)


@dataclass(frozen=True)
class SurveyWeight:
    """The column whose values weight a table's rows, and their public bounds [lo, hi]."""

    column: str
    lo: int
    hi: int

    def __post_init__(self) -> None:
        where = "survey_weight"
        if not isinstance(self.column, str) or not self.column:
            raise PlanError(f"{where}.column must be a column name, got {quote(self.column)}.")
        for value in (self.lo, self.hi):
            if isinstance(value, bool) or not isinstance(value, int):
                raise PlanError(bounds_message([self.lo, self.hi]))
        if not 0 <= self.lo < self.hi <= MAX_WEIGHT:
            raise PlanError(bounds_message([self.lo, self.hi]))

    def to_dict(self) -> dict[str, Any]:
        """As the plan and `metadata.json` write it."""
        return {"column": self.column, "bounds": [self.lo, self.hi]}


def bounds_message(got: object) -> str:
    return (
        "survey_weight.bounds must be [0, W] (or [lo, W] with 0 ≤ lo < W): whole numbers, W "
        f"above 0 and at most 2^40 (the largest weight one row may carry), got {quote(got)}."
    )


def _whole(value: object) -> object:
    """A whole number written as a float (2000.0) is that integer; anything else as it is."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def parse_survey_weight(raw: object, where: str) -> SurveyWeight | None:
    """`survey_weight: {column: C, bounds: [lo, W]}` (None when the table has none)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise PlanError(
            f"{where}: survey_weight must be {{column: C, bounds: [0, W]}}, got {quote(raw)}."
        )
    unknown = sorted(str(k) for k in raw if k not in SURVEY_WEIGHT_KEYS)
    if unknown:
        raise PlanError(
            f"{where}: survey_weight has unknown keys {unknown}; allowed: column, bounds."
        )
    column = raw.get("column")
    if isinstance(column, int) and not isinstance(column, bool):
        column = str(column)
    if not isinstance(column, str) or not column:
        raise PlanError(
            f"{where}: survey_weight.column must be a column name, got {quote(column)}."
        )
    bounds = raw.get("bounds")
    if not isinstance(bounds, list | tuple) or len(bounds) != 2:
        raise PlanError(f"{where}: " + bounds_message(bounds))
    lo, hi = (_whole(b) for b in bounds)
    try:
        return SurveyWeight(column, lo, hi)  # type: ignore[arg-type]
    except PlanError as error:
        raise PlanError(f"{where}: {error}") from None
