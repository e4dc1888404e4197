"""What a release counts from the data: the plan's tables and the unions the strategy measures.

Every measurement of `strategy: auto` used to be a coarsening of a published table, so its
true counts were summed from that table's. A union of two tables (`merge`: age × sex ×
insurance for age × sex and age × insurance) is not, so the counting engines count it too,
as one more table that nobody publishes. Which unions that are depends only on the tables
(the pure strategy's scale-free shape, cached per table set), not on ε, so a count made before
a what-if on the budget still holds everything the release needs. The unions are counted
whenever the pure accountant can be the one chosen; unused counts cost a pass over a few small
tables, and, like every true count, never leave the process.
"""

from __future__ import annotations

from dprelease.accounting.accountants.registry import chosen, strategy_accountants
from dprelease.errors import BudgetError, PlanError
from dprelease.plan.model import Plan
from dprelease.plan.subtables import reduce_key
from dprelease.plan.table_spec import TableSpec
from dprelease.plan.zeros import contains_zero

MEASURED_PREFIX = "measured."
ZERO_PREFIX = "zero."


def _may_be_laplace(plan: Plan) -> bool:
    """True when the accountant may be one whose strategy measures unions (its shape is the
    Laplace one): the plan's own, or under `auto` any such candidate."""
    fixed = chosen(plan.budget)
    if fixed is not None:
        return fixed.strategy_shape == "laplace"
    return any(a.strategy_shape == "laplace" for a in strategy_accountants(plan.budget.delta))


def union_tables(plan: Plan) -> tuple[TableSpec, ...]:
    """The unions `strategy: auto` may measure, as tables to count (names no table has)."""
    if plan.budget.strategy != "auto" or not _may_be_laplace(plan):
        return ()
    if any(spec.survey_weight is not None for spec in plan.tables):
        return ()  # measured as listed (accounting/weighted.py)
    if not plan.tables:
        return ()
    # here, not at the top: the strategy needs scipy, which a release measuring its tables as
    # listed never imports (tests/unit/test_imports.py)
    from dprelease.strategy.select import WorkloadTable, pure_unions

    try:
        bys = pure_unions(plan.schema, [WorkloadTable(s.name, s.by, s.weight) for s in plan.tables])
    except (PlanError, BudgetError):
        return ()  # the allocation reports the plan's problem in its own words
    taken = {s.name for s in plan.tables}
    out = []
    for index, by in enumerate(bys, start=1):
        name = f"{MEASURED_PREFIX}{index}"  # short: a union of long names may pass 100 chars
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(TableSpec(name=name, by=reduce_key(plan.schema, by)))
    return tuple(out)


def zero_tables(plan: Plan) -> tuple[TableSpec, ...]:
    """Per structural zero that no table carries, a table over its columns to count (never
    published): the release refuses data with rows in a zero (issue 35), which a table
    without the zero's columns cannot show. Only over columns some table uses (the others are
    not read)."""
    tables = (*plan.tables, *plan.invariants)
    used = set(plan.used_columns)
    taken = {s.name for s in tables}
    out = []
    for index, zero in enumerate(plan.structural_zeros, start=1):
        by = reduce_key(plan.schema, zero.columns)
        if not set(by) <= used or any(contains_zero(plan.schema, zero, s.by) for s in tables):
            continue
        name = f"{ZERO_PREFIX}{index}"
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(TableSpec(name=name, by=by))
    return tuple(out)


def counted_tables(plan: Plan) -> tuple[TableSpec, ...]:
    """The plan's tables, then the unions to count with them, then the invariant tables
    (exact counts the plan chose to publish, issue 27), then the zeros no table carries, then
    what a synthesis share measures (issue 38.6; last, so that no measurement is summed from
    it)."""
    tables = (*plan.tables, *union_tables(plan), *plan.invariants, *zero_tables(plan))
    if plan.postprocess.synthetic_share is None:
        return tables
    from dprelease.plan.synthesis import synthesis_tables  # the synthesis needs the plan only

    return (*tables, *synthesis_tables(plan))
