"""Which tables are post-processed together (issue 37.8): counts never meet weighted totals.

A weighted table's cells are sums of weights, not numbers of rows: its margins agree with the
coarser tables of the *same* survey weight, never with the count tables (a person counts 1 in
one and W in the other). So the tables are split into groups, post-processed one group at a
time: the count tables (with the invariants, which are counts), then the tables of each
survey weight. A plan without weighted tables is one group, the plan itself. Within a weighted
group the plan's clamp keeps its lower bound only (an upper bound on counts means nothing for
weighted totals); non-negativity and whole numbers apply as to counts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dprelease.accounting.allocated import Allocation
from dprelease.plan.model import Plan, Postprocess


@dataclass(frozen=True)
class TableGroup:
    """Tables post-processed together: a plan of them alone, their allocation, the settings."""

    plan: Plan
    allocation: Allocation
    settings: Postprocess


def mixed(plan: Plan) -> bool:
    """True when the plan's tables form more than one group (weighted tables beside counts,
    invariants, or another weight's tables)."""
    kinds = {spec.survey_weight for spec in plan.tables}
    if plan.invariants:
        kinds.add(None)
    return len(kinds) > 1


def weight_groups(plan: Plan, allocation: Allocation, settings: Postprocess) -> list[TableGroup]:
    """The count tables, then each survey weight's tables; [the whole plan] when one group."""
    if not mixed(plan):
        return [TableGroup(plan, allocation, settings)]
    groups = []
    for weight in (None, *plan.survey_weights):
        specs = tuple(s for s in plan.tables if s.survey_weight == weight)
        if not specs and (weight is not None or not plan.invariants):
            continue
        names = {s.name for s in specs}
        # a plan of these tables alone: postprocessing reads its tables, schema and zeros
        # (`equal`: a group may hold none of the plan's targets)
        budget = dataclasses.replace(plan.budget, allocation="equal", strategy="workload")
        group_plan = dataclasses.replace(
            plan,
            tables=specs,
            invariants=plan.invariants if weight is None else (),
            statistics=(),
            discoveries=(),
            budget=budget,
        )
        group_allocation = dataclasses.replace(
            allocation,
            tables=tuple(t for t in allocation.tables if t.name in names),
            measurements=tuple(m for m in allocation.measurements if m.name in names),
        )
        group_settings = settings
        if weight is not None:
            group_settings = dataclasses.replace(settings, clamp=(settings.clamp[0], None))
        groups.append(TableGroup(group_plan, group_allocation, group_settings))
    return groups
