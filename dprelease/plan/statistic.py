"""A table of statistics (`stat:`) and a column whose domain is discovered (`discover:`).

A plan's `tables:` entry with `stat:` releases one statistic per cell of its `by` columns (a
quantile, a sum or a mean of a data column, `dprelease.plan.stat_spec`) instead of counts. It is
kept apart from the count tables (`Plan.statistics`), so that counting, post-processing and
the accuracy strategy see count tables only. `weight`, `epsilon` and `rho` mean what they mean
for a count table; `delta` and `target` do not apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dprelease.errors import PlanError, quote
from dprelease.plan.schema import CategoricalColumn, Schema
from dprelease.plan.stat_spec import DiscoverSpec, StatSpec
from dprelease.plan.table_spec import TableSpec, Unit

DISCOVERED: Final = "discovered"  # a column's domain_source once discovery has run


@dataclass(frozen=True)
class StatisticTable:
    """One statistic per cell of `table.by`: name, by, weight and locks as for counts."""

    table: TableSpec
    stat: StatSpec

    def __post_init__(self) -> None:
        where = f"Table {quote(self.table.name)}"
        if self.table.delta is not None or self.table.target is not None:
            raise PlanError(f"{where} is a statistic: it takes no `delta` or `target`.")
        if self.stat.column in self.table.by:
            raise PlanError(
                f"{where} groups by its own statistic's column {quote(self.stat.column)}."
            )

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def by(self) -> tuple[str, ...]:
        return self.table.by


@dataclass(frozen=True)
class Discovery:
    """A categorical column whose domain is released by private discovery."""

    column: str
    spec: DiscoverSpec


def statistic_problems(
    statistics: tuple[StatisticTable, ...],
    discoveries: tuple[Discovery, ...],
    schema: Schema,
    unit: Unit,
    accounting: str,
) -> list[str]:
    """Problems of the statistics and discoveries that involve the rest of the plan (its
    unknown columns are the model's `unknown_column_problems`: this module sits below it)."""
    problems: list[str] = []
    for statistic in statistics:
        where = f"Table {quote(statistic.name)}"
        if unit.kind == "id" and statistic.stat.column == unit.column:
            problems.append(f"{where}: the unit id column cannot be a statistic's column.")
        if statistic.table.rho is not None and accounting != "zcdp":
            problems.append(f"{where} locks rho, which only zcdp accounting uses.")
    for discovery in discoveries:
        column = next((c for c in schema.columns if c.name == discovery.column), None)
        if not isinstance(column, CategoricalColumn) or column.domain_source != DISCOVERED:
            problems.append(f"Column {quote(discovery.column)} is not a discovered column.")
        elif unit.kind == "id" and discovery.column == unit.column:
            problems.append("The unit id column cannot have a discovered domain.")
    return problems
