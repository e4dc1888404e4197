"""Where statistics and discoveries meet noise (issue 16), for a release or a preview.

Order: each discovered column's domain is drawn first (the stability-based histogram), the
plan is completed with the released domains, the count tables are counted on it and drawn
(`draw.draw_release`), then every statistic is drawn per cell. A release uses OpenDP's secure
samplers only; a preview passes a numpy generator and is labelled PREVIEW. Each statistic is
drawn by its own object (`dprelease.stats.registry`), handed the noise (`stat_noise.SECURE`,
or `PreviewNoise` for a preview).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dprelease.data.count import TrueCounts
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn
from dprelease.plan.statistic import DISCOVERED
from dprelease.release.stat_noise import SECURE
from dprelease.stats.allocation import PlanAllocation, allocate
from dprelease.stats.entry import StatisticBudget
from dprelease.stats.noise import PreviewNoise, StatNoise
from dprelease.stats.registry import DISCOVERY, DiscoveredDomain
from dprelease.stats.source import StatSource

Counter = Callable[[Plan], TrueCounts]  # counts the count tables of the completed plan
EmptyTable = tuple[str, tuple[str, ...], str]  # name, by, "count" or "value"


@dataclass(frozen=True)
class ReleasedStatistic:
    """One statistic's noisy values: shape (cells, quantiles) for quantiles, (cells,) else."""

    budget: StatisticBudget
    values: np.ndarray
    moe: np.ndarray | None = None  # each value's margin at the plan's confidence; None: none

    @property
    def name(self) -> str:
        return self.budget.name


def discover_domains(
    plan: Plan, allocation: PlanAllocation, source: StatSource, rng: np.random.Generator | None
) -> dict[str, DiscoveredDomain]:
    """Each discovered column's released domain (secure unless `rng` is given: PREVIEW)."""
    noise = _noise(rng)
    return {
        budget.column: DISCOVERY.draw(source.texts(budget.column), budget.mechanism, noise)
        for budget in allocation.discoveries
    }


def _noise(rng: np.random.Generator | None) -> StatNoise:
    """Secure noise for a release; numpy's (PREVIEW) when a generator is given."""
    return SECURE if rng is None else PreviewNoise(rng)


def with_domains(plan: Plan, domains: dict[str, DiscoveredDomain]) -> Plan:
    """The plan with each discovered column's domain filled in (still `discovered`)."""
    if not domains:
        return plan
    columns = tuple(
        CategoricalColumn(
            column.name,
            tuple(str(v) for v in domains[column.name].values),
            domain_source=DISCOVERED,
        )
        if column.name in domains
        else column
        for column in plan.schema.columns
    )
    schema = dataclasses.replace(plan.schema, columns=columns)
    return dataclasses.replace(plan, schema=schema)


def draw_statistic(
    plan: Plan, budget: StatisticBudget, source: StatSource, rng: np.random.Generator | None
) -> ReleasedStatistic:
    data = source.stat_data(plan, budget.statistic)
    kind = budget.kind
    values, moe = kind.draw_with_moe(data, budget.mechanism, _noise(rng), budget.confidence)
    values.setflags(write=False)
    return ReleasedStatistic(budget, values, moe)


def complete_plan(
    plan: Plan,
    allocation: PlanAllocation,
    source: StatSource | None,
    rng: np.random.Generator | None,
) -> tuple[Plan, PlanAllocation, dict[str, DiscoveredDomain], tuple[EmptyTable, ...]]:
    """Discover the domains, then the completed plan and its allocation: the same shares and
    total as the allocation charged (checked), with the tables' cells now known. Tables over
    a domain that found no value have no cells: they are left out of the draw (their budget
    stays spent) and exported as header-only files (`empty_tables`)."""
    if not plan.discoveries:
        return plan, allocation, {}, ()
    if source is None:
        raise InternalError("domain discovery needs the data")
    domains = discover_domains(plan, allocation, source, rng)
    completed = with_domains(plan, domains)
    # the accountant and strategy the charged allocation used (auto is not chosen again)
    settled = dataclasses.replace(
        completed.budget, accounting=allocation.accounting, strategy=allocation.strategy
    )
    completed = dataclasses.replace(completed, budget=settled)
    again = allocate(completed)
    if again.total != allocation.total:
        raise InternalError("the completed plan's allocation differs from the one charged")
    found = tuple(empty_tables(completed))
    empty = {name for name, _, _ in found}
    if empty:
        completed = dataclasses.replace(
            completed,
            tables=tuple(t for t in completed.tables if t.name not in empty),
            statistics=tuple(s for s in completed.statistics if s.name not in empty),
        )
        again = dataclasses.replace(
            again,
            tables=tuple(t for t in again.tables if t.name not in empty),
            measurements=tuple(m for m in again.measurements if m.name not in empty),
            statistics=tuple(s for s in again.statistics if s.name not in empty),
        )
    return completed, again, domains, found


def empty_tables(plan: Plan) -> list[EmptyTable]:
    """(name, by, last header) of the tables over a discovered domain that found nothing."""

    def empty(by: tuple[str, ...]) -> bool:
        return any(plan.schema[name].size == 0 for name in by)

    found = [(t.name, t.by, "count") for t in plan.tables if empty(t.by)]
    return found + [(s.name, s.by, "value") for s in plan.statistics if empty(s.by)]


def draw_statistics(
    plan: Plan,
    allocation: PlanAllocation,
    source: StatSource | None,
    rng: np.random.Generator | None,
) -> tuple[ReleasedStatistic, ...]:
    if not allocation.statistics:
        return ()
    if source is None:
        raise InternalError("statistics need the data")
    return tuple(draw_statistic(plan, b, source, rng) for b in allocation.statistics)


def upload_inputs(
    data: bytes, plan: Plan, filename: str
) -> tuple[TrueCounts | Counter, StatSource | None]:
    """The dashboard's inputs of a draw from an upload: the true counts (or, with discovered
    domains or no count tables, a function that counts the completed plan) and the
    statistics' rows (None without statistics or discoveries)."""
    from types import MappingProxyType

    from dprelease.data.count import count, load_data
    from dprelease.stats.source import read_stat_source

    def counter(completed: Plan) -> TrueCounts:
        if not completed.tables:
            return TrueCounts(MappingProxyType({}))
        return count(load_data(data, completed, filename=filename), completed)

    if not (plan.statistics or plan.discoveries):
        return counter(plan), None
    return counter, read_stat_source(data, plan, filename=filename)


def preview_errors(
    plan: Plan, allocation: PlanAllocation, source: StatSource | None, rng: np.random.Generator
) -> dict[str, list[dict[str, float]]]:
    """CONFIDENTIAL (read from the data; Preview only): each statistic's error per cell at
    the plan's confidence, as its object reads it (`StatisticKind.preview_error`): e.g. a
    quantile's exact margin in rank and in value, a mean's RMSE by simulation."""
    if source is None:
        return {}
    alpha = 1 - allocation.confidence
    return {
        budget.name: budget.kind.preview_error(
            source.stat_data(plan, budget.statistic), budget.mechanism, alpha, rng
        )
        for budget in allocation.statistics
    }
