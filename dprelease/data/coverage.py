"""CONFIDENTIAL: how the data's values fall against the declared domains, column by column.

The Data page shows it to the data holder while they declare domains, before any table
exists, so it encodes every declared column present in the data on its own (no unit cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from dprelease.data.columns import float_values
from dprelease.data.count import encode_columns
from dprelease.data.report import ColumnReport, StatisticReport, statistic_report
from dprelease.errors import quote
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_schema
from dprelease.plan.schema import MISSING_CODE


def domain_coverage(table: pa.Table, plan: dict[str, Any]) -> dict[str, ColumnReport]:
    """Per declared column present in the data: rows in the domain, sent to `other`, left
    out or clamped. Raises PlanError if the columns' declarations are not valid yet."""
    columns = plan.get("columns", {})
    present = [name for name in columns if name in table.column_names]
    if not present:
        return {}
    _, reports = encode_columns(table, parse_schema(columns), present)
    return {report.name: report for report in reports}


@dataclass(frozen=True)
class PlanCoverage:
    """CONFIDENTIAL (for the data holder's screen only, never exported): rows the plan's tables
    and statistics lose. `rows_left_out` counts rows left out of at least one table or
    statistic: a value outside the domain, or missing, in a column some table or statistic
    groups by, with no `other` label; or no number (missing, or a text such as `N`) in a
    statistic's own column. `columns` has the per-column figures of the grouping columns that
    lose rows; `statistics` each statistic's rows with no number (left out) and numbers
    outside its bounds (clamped, not left out), for those that have any."""

    rows: int
    rows_left_out: int
    columns: tuple[ColumnReport, ...]
    statistics: tuple[StatisticReport, ...] = ()

    @property
    def share_left_out(self) -> float:
        return self.rows_left_out / self.rows if self.rows else 0.0

    def needs_confirmation(self) -> bool:
        """Whether a release must be confirmed explicitly: more than GATE_SHARE of the rows
        are left out of some table."""
        return self.share_left_out > GATE_SHARE

    @property
    def lossy_columns(self) -> tuple[str, ...]:
        """The columns that make rows be left out: grouping columns, statistics' columns."""
        names = [c.name for c in self.columns]
        names += [s.column for s in self.statistics if s.rows_left_out]
        return tuple(dict.fromkeys(names))

    def summary(self) -> str:
        """One line naming the columns and statistics and their counts (confidential)."""
        parts = [
            f"{self.rows_left_out:,} of {self.rows:,} rows ({self.share_left_out:.1%}) are left "
            "out of at least one table or statistic"
        ]
        if self.columns:
            domain = ", ".join(f"{quote(c.name)}: {c.rows_left_out:,}" for c in self.columns)
            parts.append(f"rows outside the domain, per column: {domain}")
        for kind, what in (
            ("rows_left_out", "rows with no number (missing or not a number), per statistic"),
            ("rows_clamped", "values outside a statistic's bounds, used as the nearest bound"),
        ):
            figures = [
                f"{quote(s.name)} ({quote(s.column)}): {getattr(s, kind):,}"
                for s in self.statistics
                if getattr(s, kind)
            ]
            if figures:
                parts.append(f"{what}: {', '.join(figures)}")
        return "; ".join(parts)


GATE_SHARE = 0.01
"""Above this share of the rows left out of some table, a release asks for confirmation."""


def plan_coverage(table: pa.Table, plan: Plan) -> PlanCoverage:
    """How many rows of `table` the plan's tables and statistics leave out, before any unit
    cap, over the columns they use that the data have (a missing column is the release's own
    error)."""
    # a domain discovered at release time is not known yet: its rows are not "left out"
    discovered = {d.column for d in plan.discoveries}
    present = [
        name
        for name in plan.grouping_columns
        if name in table.column_names and name not in discovered
    ]
    codes, reports = encode_columns(table, plan.schema, present)
    lost = np.zeros(table.num_rows, dtype=bool)
    for name in present:
        lost |= codes[name] == MISSING_CODE
    statistics = []
    for statistic in plan.statistics:
        column = statistic.stat.column
        if column not in table.column_names:
            continue
        values = float_values(table.column(column), column)
        lost |= np.isnan(values)  # the release leaves these rows out of the statistic
        report = statistic_report(statistic, values)
        if report.rows_left_out or report.rows_clamped:
            statistics.append(report)
    return PlanCoverage(
        rows=table.num_rows,
        rows_left_out=int(np.count_nonzero(lost)),
        columns=tuple(r for r in reports if r.rows_left_out),
        statistics=tuple(statistics),
    )
