"""CONFIDENTIAL (for the data holder only, never exported): what encoding did to the rows, per
column (sent to the other label, left out, clamped), per survey weight (missing, clamped), and
the report of data counted in parts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dprelease.errors import InternalError, quote
from dprelease.plan.model_spec import PcaSpec, RegressionSpec
from dprelease.plan.stat_spec import stat_bounds
from dprelease.plan.statistic import StatisticTable


@dataclass(frozen=True)
class ColumnReport:
    """CONFIDENTIAL (for the data holder only, never exported): how one column was encoded.

    Counts are over the rows kept after the unit cap. `rows_to_other`: values outside the
    domain (missing included) sent to the `other` label; `rows_left_out`: rows left out of
    every table using the column; `rows_clamped`: numeric values moved into the first/last bin.
    """

    name: str
    kind: Literal["categorical", "numeric"]
    rows: int
    rows_to_other: int = 0
    rows_left_out: int = 0
    rows_clamped: int = 0

    @property
    def rows_in_domain(self) -> int:
        """Rows whose own value is a cell of the domain (clamped numbers included)."""
        return self.rows - self.rows_to_other - self.rows_left_out


@dataclass(frozen=True)
class StatisticReport:
    """CONFIDENTIAL (for the data holder only, never exported): the rows of one statistic's
    column that it cannot use as they are. `rows_left_out`: no number (missing, or a text
    such as `N`), so the row is left out of the statistic; `rows_clamped`: a number outside
    the bounds, used as the nearest bound (sums and means clamp it; a quantile ranks it
    beyond every candidate)."""

    name: str
    column: str
    rows_left_out: int = 0
    rows_clamped: int = 0

    def line(self) -> str | None:
        parts = [
            f"{rows:,} row{'' if rows == 1 else 's'} {what}"
            for rows, what in (
                (self.rows_left_out, f"left out ({quote(self.column)} missing or not a number)"),
                (self.rows_clamped, "outside its bounds (used as the nearest bound)"),
            )
            if rows
        ]
        return f"statistic {quote(self.name)}: " + ", ".join(parts) if parts else None


@dataclass(frozen=True)
class WeightReport:
    """CONFIDENTIAL (for the data holder only, never exported): what the clamp of one survey
    weight did to the kept rows (issue 37). `rows_missing`: no number (missing, NaN or a text
    such as `NA`), so the row weighs 0; `rows_below` / `rows_above`: a number below the lower
    bound or above W, used as that bound."""

    column: str
    lo: int
    hi: int
    rows: int
    rows_missing: int = 0
    rows_below: int = 0
    rows_above: int = 0

    @property
    def rows_clamped(self) -> int:
        return self.rows_below + self.rows_above

    def line(self) -> str:
        """One line, also when nothing was clamped (the data holder sees that it was checked)."""
        return (
            f"survey weight {quote(self.column)} (bounds [{self.lo:,}, {self.hi:,}]): "
            f"{self.rows_missing:,} of {self.rows:,} rows missing or not a number (weight 0), "
            f"{self.rows_clamped:,} clamped ({self.rows_below:,} below {self.lo:,}, "
            f"{self.rows_above:,} above {self.hi:,})"
        )

    def to_dict(self) -> dict[str, Any]:
        """For `validate --json` on the data holder's own screen (never for a release)."""
        return {
            "column": self.column,
            "bounds": [self.lo, self.hi],
            "rows": self.rows,
            "rows_missing": self.rows_missing,
            "rows_clamped": self.rows_clamped,
            "rows_below": self.rows_below,
            "rows_above": self.rows_above,
        }


def weight_report(column: str, lo: int, hi: int, values: np.ndarray) -> WeightReport:
    """CONFIDENTIAL: of these weights (float64, NaN where no number), how many are missing and
    how many lie below `lo` or above `hi` (the clamp of `data.count.weight_units`)."""
    missing = np.isnan(values)
    return WeightReport(
        column,
        lo,
        hi,
        rows=len(values),
        rows_missing=int(np.count_nonzero(missing)),
        rows_below=int(np.count_nonzero(values < lo)),
        rows_above=int(np.count_nonzero(values > hi)),
    )


@dataclass(frozen=True)
class DataReport:
    """CONFIDENTIAL (for the data holder only, never exported): what encoding did to the rows."""

    rows_read: int
    rows_dropped_by_unit_cap: int
    columns: tuple[ColumnReport, ...]
    statistics: tuple[StatisticReport, ...] = ()
    weights: tuple[WeightReport, ...] = ()  # issue 37: one per survey weight the plan uses

    @property
    def rows_kept(self) -> int:
        return self.rows_read - self.rows_dropped_by_unit_cap

    def lines(self) -> tuple[str, ...]:
        """The report as short lines for the data holder's own screen (never for a release)."""
        dropped = self.rows_dropped_by_unit_cap
        lines = [
            f"{self.rows_read:,} rows read"
            + (f", {dropped:,} dropped by the unit cap (max_rows per unit)" if dropped else "")
        ]
        for column in self.columns:
            parts = [
                f"{rows:,} row{'' if rows == 1 else 's'} {what}"
                for rows, what in (
                    (column.rows_to_other, "sent to the other label"),
                    (column.rows_left_out, "left out (outside the domain or missing)"),
                    (column.rows_clamped, "clamped into the first/last bin"),
                )
                if rows
            ]
            if parts:
                lines.append(f"column {quote(column.name)}: " + ", ".join(parts))
        lines += [line for s in self.statistics if (line := s.line()) is not None]
        lines += [w.line() for w in self.weights]
        return (*lines, *self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """For `validate --json` on the data holder's own screen (never for a release)."""
        return {
            "confidential": "for the data holder only, never in a release",
            "rows_read": self.rows_read,
            "rows_dropped_by_unit_cap": self.rows_dropped_by_unit_cap,
            "survey_weights": [w.to_dict() for w in self.weights],
            "lines": list(self.lines()),
        }

    def joined(self, other: DataReport) -> DataReport:
        """This report (of the counting) with the columns it lacks and the statistics of
        `other` (the statistics' own reading of the same data)."""
        names = {c.name for c in self.columns}
        extra = tuple(c for c in other.columns if c.name not in names)
        return dataclasses.replace(
            self,
            columns=(*self.columns, *extra),
            statistics=(*self.statistics, *other.statistics),
            weights=self.weights or other.weights,
        )

    @property
    def warnings(self) -> tuple[str, ...]:
        """Advice for the data holder: columns where no row has a value of the domain."""
        return tuple(
            f"Column {quote(c.name)}: no value in the data is in the plan's domain, so every "
            + ("row goes to the other label" if c.rows_to_other else "row is left out")
            + "; check the domain against the data (e.g. '01' vs '1', spelling, bins)."
            for c in self.columns
            if c.rows > 0 and c.rows_in_domain == 0
        )


_COLUMN_COUNTS = ("rows", "rows_to_other", "rows_left_out", "rows_clamped")
_WEIGHT_COUNTS = ("rows", "rows_missing", "rows_below", "rows_above")


def _summed(reports: Sequence[tuple[Any, ...]], fields: tuple[str, ...]) -> tuple[Any, ...]:
    """Part by part, each item's `fields` summed over the parts (the rest from the first)."""
    return tuple(
        dataclasses.replace(parts[0], **{f: sum(getattr(p, f) for p in parts) for f in fields})
        for parts in zip(*reports, strict=True)
    )


def merge_reports(reports: Sequence[DataReport]) -> DataReport:
    """One report for data counted in parts (batches): every figure is a sum."""
    if not reports:
        raise InternalError("no data report to merge")
    columns = _summed([r.columns for r in reports], _COLUMN_COUNTS)
    weights = _summed([r.weights for r in reports], _WEIGHT_COUNTS)
    return DataReport(
        rows_read=sum(r.rows_read for r in reports),
        rows_dropped_by_unit_cap=sum(r.rows_dropped_by_unit_cap for r in reports),
        columns=columns,
        weights=weights,
    )


def statistic_report(statistic: StatisticTable, values: np.ndarray) -> StatisticReport:
    """CONFIDENTIAL: of these values of the statistic's column, how many are no number (the
    row is left out of the statistic: `kept` drops NaN) and how many lie outside the bounds
    (clamped: sums and means clamp them, a quantile ranks them below or above every
    candidate)."""
    lo, hi = stat_bounds(statistic.stat)
    missing = np.isnan(values)
    outside = ~missing & ((values < lo) | (values > hi))
    return StatisticReport(
        statistic.name,
        statistic.stat.column,
        rows_left_out=int(np.count_nonzero(missing)),
        rows_clamped=int(np.count_nonzero(outside)),
    )


def model_report(statistic: StatisticTable, rows: np.ndarray) -> StatisticReport:
    """CONFIDENTIAL: a regression's or PCA's rows (n × its columns, in the spec's order) left
    out (some column has no number) and clamped (some value outside its column's bounds)."""
    spec = statistic.stat
    if not isinstance(spec, RegressionSpec | PcaSpec):
        raise InternalError("a model report needs a regression or PCA")
    bounds = np.array(spec.bounds, dtype=np.float64)
    missing = np.isnan(rows).any(axis=1)
    outside = ~missing & ((rows < bounds[:, 0]) | (rows > bounds[:, 1])).any(axis=1)
    return StatisticReport(
        statistic.name,
        ", ".join(spec.columns),
        rows_left_out=int(np.count_nonzero(missing)),
        rows_clamped=int(np.count_nonzero(outside)),
    )
