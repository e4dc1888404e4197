"""CONFIDENTIAL: how the data's values fall against the declared domains, column by column.

The Data page shows it to the data holder while they declare domains, before any table
exists, so it encodes every declared column present in the data on its own (no unit cap).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from dprelease.data.columns import float_values
from dprelease.data.count import encode_columns
from dprelease.data.report import (
    ColumnReport,
    DataReport,
    StatisticReport,
    WeightReport,
    model_report,
    statistic_report,
    weight_report,
)
from dprelease.errors import DataError, PlanError, quote
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_schema
from dprelease.plan.schema import MISSING_CODE
from dprelease.plan.stat_spec import stat_columns
from dprelease.plan.survey_weight import SurveyWeight, parse_survey_weight


def domain_coverage(table: pa.Table, plan: dict[str, Any]) -> dict[str, ColumnReport]:
    """Per declared column present in the data: rows in the domain, sent to `other`, left
    out or clamped. Raises PlanError if the columns' declarations are not valid yet."""
    columns = plan.get("columns", {})
    present = [name for name in columns if name in table.column_names]
    if not present:
        return {}
    _, reports = encode_columns(table, parse_schema(columns), present)
    return {report.name: report for report in reports}


def weight_coverage(table: pa.Table, plan: dict[str, Any]) -> tuple[WeightReport, ...]:
    """Per valid survey weight the plan's tables use whose column the data have (issue 37):
    the rows with no weight and the rows the clamp moves, over every row (no unit cap)."""
    weights: dict[SurveyWeight, None] = {}
    for spec in plan.get("tables") or []:
        try:
            weight = parse_survey_weight(spec.get("survey_weight"), "table")
        except (AttributeError, PlanError):  # not a table yet, or a bad weight: its own error
            continue
        if weight is not None and weight.column in table.column_names:
            weights.setdefault(weight)
    return tuple(
        weight_report(w.column, w.lo, w.hi, float_values(table.column(w.column), w.column))
        for w in weights
    )


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
        return exceeds_gate(self.rows_left_out, self.rows)

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


def exceeds_gate(rows_left_out: int, rows: int) -> bool:
    """The one 1% rule (issue 37): the dashboard's confirmation, `validate`'s problem and
    `release`'s refusal without `--allow-left-out`."""
    return rows > 0 and rows_left_out / rows > GATE_SHARE


@dataclass(frozen=True)
class LeftOut:
    """CONFIDENTIAL: the rows one table or statistic leaves out (a value outside the domain
    or missing in a column it groups by; no number in a statistic's column). `rows_left_out`
    is exact for a count table that was counted, else the most any one of its columns loses
    (a lower bound). Never printed: messages say only "more than 1%"."""

    kind: str  # "table" or "statistic"
    name: str
    columns: tuple[str, ...]  # the grouping columns that lose rows
    rows_left_out: int
    rows: int
    number_column: str | None = None  # a statistic's own column, when it has rows with no number

    @property
    def over_gate(self) -> bool:
        return exceeds_gate(self.rows_left_out, self.rows)

    def problem(self) -> str:
        """One line for the data holder, with no count (the dashboard's "more than 1%")."""
        causes = []
        if self.columns or self.number_column is None:
            where = ", ".join(quote(c) for c in self.columns) or "its columns"
            causes.append(f"a value outside the domain, or missing, in {where}")
        if self.number_column is not None:
            causes.append(f"no number in {quote(self.number_column)}")
        check = "the domains against the data (e.g. '01' vs '1', spelling, bins)"
        if not self.columns and self.number_column is not None:
            check = "the column's missing values"
        return (
            f"{self.kind.capitalize()} {quote(self.name)} leaves out more than 1% of the rows "
            f"({'; '.join(causes)}); check {check}."
        )


class LeftOutError(DataError):
    """A release that leaves out more than 1% of the rows of some table or statistic, not
    confirmed (the CLI's `--allow-left-out`, the dashboard's confirmation)."""

    def __init__(self, items: list[LeftOut]) -> None:
        self.items = items
        first = items[0].problem()
        more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
        super().__init__(
            f"{first.removesuffix('.')}{more}. Nothing was charged; to release without these "
            "rows, confirm it: --allow-left-out (ALLOW_LEFT_OUT = True in exported code).",
            [item.problem() for item in items],
        )


def left_out_items(
    plan: Plan,
    report: DataReport,
    counts: Mapping[str, np.ndarray] | None = None,
    discovered: frozenset[str] = frozenset(),
) -> list[LeftOut]:
    """CONFIDENTIAL: what each of the plan's tables and statistics leaves out, from a
    counting's data report (and its true counts, which make a count table's figure exact:
    the rows kept less the table's total). Tables not in `counts` and statistics take the
    most that one of their columns loses. As in `plan_coverage`, the rows of a value a
    discovered domain does not publish (the plan's or `discovered`) are not "left out"."""
    discovered = discovered | {d.column for d in plan.discoveries}
    lost = {c.name: c.rows_left_out for c in report.columns if c.name not in discovered}
    rows = report.rows_kept
    items = []
    for spec in plan.tables:
        columns = tuple(name for name in spec.by if lost.get(name))
        counted = counts.get(spec.name) if counts is not None else None
        if counted is not None and not discovered & set(spec.by):
            left_out = max(rows - int(counted.sum()), 0)
        else:
            left_out = max((lost[name] for name in columns), default=0)
        items.append(LeftOut("table", spec.name, columns, left_out, rows))
    by_name = {s.name: s for s in report.statistics}
    for statistic in plan.statistics:
        columns = tuple(name for name in statistic.by if lost.get(name))
        figures = [lost[name] for name in columns]
        own = by_name.get(statistic.name)
        number = own.column if own is not None and own.rows_left_out else None
        if own is not None and number is not None:
            figures.append(own.rows_left_out)
        left_out = max(figures, default=0)
        items.append(LeftOut("statistic", statistic.name, columns, left_out, rows, number))
    return items


def check_left_out(items: list[LeftOut], *, allowed: bool = False) -> list[LeftOut]:
    """The items over the 1% rule; LeftOutError if there are any and the release is not
    `allowed` (confirmed: the CLI's --allow-left-out, the dashboard's checkbox)."""
    over = [item for item in items if item.over_gate]
    if over and not allowed:
        raise LeftOutError(over)
    return over


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
        names = stat_columns(statistic.stat)
        if len(names) > 1:  # a regression or PCA: a row needs a number in every column
            if not set(names) <= set(table.column_names):
                continue
            rows = np.column_stack([float_values(table.column(c), c) for c in names])
            lost |= np.isnan(rows).any(axis=1)
            report = model_report(statistic, rows)
            if report.rows_left_out or report.rows_clamped:
                statistics.append(report)
            continue
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
