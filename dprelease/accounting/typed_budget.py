"""Budgets are the decimals people type (issue 37.4).

A plan's ε = 0.4 grants exactly 2/5, but the float 0.4 is 2e-17 above it; locks of 0.1 and
0.2 add up, as floats, to more than the total 0.3 (an allocation refused them). So an
allocation prices `spendable_plan(plan)`: every budget number a person typed (the total's ε,
δ and ρ, and every table's or statistic's lock) replaced by the largest float that is not above
its decimal (`composition.spendable`). What the release then spends is at most the typed
decimals, which is what its files report and the ledger adds (`composition.typed_value`), so
0.4 and 1.0 leave exactly 0.1 of a cap of 1.5.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from dprelease.accounting.composition import spendable, typed_value
from dprelease.plan.model import Plan
from dprelease.plan.statistic import StatisticTable
from dprelease.plan.table_spec import TableSpec

Statistics = tuple[StatisticTable, ...]

_LOCKED = ("epsilon", "rho", "delta")  # a table's lock fields, named as the budget's totals


def spendable_plan(plan: Plan) -> Plan:
    """The plan an allocation prices: its typed budget numbers as spendable floats."""
    given = plan.budget
    budget = replace(
        given,
        epsilon=_spendable(given.epsilon),
        rho=_spendable(given.rho),
        delta=_spendable(given.delta),
    )
    tables = tuple(_spendable_locks(spec) for spec in plan.tables)
    statistics = tuple(
        replace(stat, table=_spendable_locks(stat.table)) for stat in plan.statistics
    )
    for name in _LOCKED:
        tables, statistics = _fit_locks(name, getattr(budget, name), tables, statistics)
    return replace(plan, budget=budget, tables=tables, statistics=statistics)


def _spendable(value: float | None) -> float | None:
    return None if value is None else spendable(value)


def _spendable_locks(spec: TableSpec) -> TableSpec:
    epsilon, rho, delta = (getattr(spec, name) for name in _LOCKED)
    return replace(spec, epsilon=_spendable(epsilon), rho=_spendable(rho), delta=_spendable(delta))


def _fit_locks(
    name: str,
    total: float | None,
    tables: tuple[TableSpec, ...],
    statistics: Statistics,
) -> tuple[tuple[TableSpec, ...], Statistics]:
    """Locks whose decimals fit the total but whose floats, each rounded down on its own,
    pass the total's float (all within an ulp of it) are nudged down an ulp at a time, the
    largest first: a lock calibrated lower spends less, so this is always safe."""
    specs = [*tables, *(stat.table for stat in statistics)]
    locked = [i for i, spec in enumerate(specs) if getattr(spec, name) is not None]
    if total is None or not locked:
        return tables, statistics
    values = {i: getattr(specs[i], name) for i in locked}
    if sum((typed_value(v) for v in values.values()), Fraction(0)) > typed_value(total):
        return tables, statistics  # over in decimals too: the allocation refuses it
    for _ in range(4 * len(locked)):
        if sum((Fraction(v) for v in values.values()), Fraction(0)) <= Fraction(total):
            break
        largest = max(values, key=lambda i: values[i])
        values[largest] = math.nextafter(values[largest], 0.0)
    specs = [replace(s, **{name: values[i]}) if i in values else s for i, s in enumerate(specs)]
    fitted = tuple(specs[: len(tables)])
    stats = tuple(
        replace(stat, table=spec)
        for stat, spec in zip(statistics, specs[len(tables) :], strict=True)
    )
    return fitted, stats
