"""A whole plan's allocation: statistics and domain discoveries, composed with the counts.

`allocate(plan)` is what `dprelease plan` prints and what a release spends: a
`PlanAllocation`, the count tables' `Allocation` plus each statistic's and discovery's budget.
A plan of count tables alone is `accounting.allocation.allocate`'s, unchanged.

The statistics (tables with `stat:`) and the discoveries (`domain: {discover: ...}`) take
their shares off the total first (issue 16); the count tables then split what is left with the
plan's own allocation (`accounting.allocation.allocate`, unchanged). Everything is in the
accountant's additive unit U (ε under pure, approx and advanced; ρ under zcdp):

- a locked statistic keeps its value: `rho:`, or `epsilon:` as the mechanism's own ε (under
  zcdp ρ = ε²/divisor, the statistic's `zcdp_divisor`: 8 for the exponential mechanism's
  bounded range, else 2);
- every other statistic, each discovery and each unlocked count table is one part of what the
  locks leave, R = U − Σ locks: part i gets R · w_i / Σ w (w = 1 under `equal`, the table's
  weight otherwise, 1 for a discovery);
- δ: under approx each Gaussian count table, sum, mean and discovery gets δ/k of the plan's
  δ (k of them; a statistic whose `needs_delta` is false, e.g. the exponential quantile, needs
  none); under advanced and zcdp each discovery gets δ/(D + 1)
  and the rest is the δ at which the counts (advanced) or the whole ρ (zcdp) are converted.

Composition: pure and approx add every ε and δ; zcdp adds every ρ and converts the sum once at
the remaining δ, then adds the discoveries' δ (each is δ_i-approximately ρ_i-zCDP); advanced
composes the counts with the advanced bound at their δ and adds the statistics' and
discoveries' (ε, δ) by basic composition. Shares are rounded down and exact sums (`Fraction`)
are checked against the plan's total, so statistics never overspend either.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from dprelease.accounting.accountants.base import Accountant, ReleaseParts
from dprelease.accounting.accountants.registry import check_plan as check_accounting
from dprelease.accounting.allocated import Allocation
from dprelease.accounting.allocation import allocate as allocate_counts
from dprelease.accounting.allocation import plan_accountant
from dprelease.accounting.typed_budget import spendable_plan
from dprelease.errors import BudgetError, InternalError
from dprelease.plan.model import Plan
from dprelease.plan.statistic import StatisticTable
from dprelease.stats.budget import Share
from dprelease.stats.entry import DiscoveryBudget, StatisticBudget, calibrate, context
from dprelease.stats.registry import DISCOVERY, kind_of
from dprelease.stats.synthesis import SynthesisBudget, calibrate_synthesis

__all__ = ["PlanAllocation", "allocate", "plan_allocation"]


@dataclass(frozen=True)
class PlanAllocation(Allocation):
    """A whole plan's allocation: the count tables' (`Allocation`) and, issue 16, its tables
    with `stat:` and its discovered domains (empty for a plan of count tables alone)."""

    statistics: tuple[StatisticBudget, ...] = ()
    discoveries: tuple[DiscoveryBudget, ...] = ()
    synthesis: SynthesisBudget | None = None  # issue 38.6: the synthesis' own share
    synthesis_share: float | None = None  # the plan's S

    @classmethod
    def of_counts(cls, counts: Allocation) -> PlanAllocation:
        """The allocation of a plan without statistics: the count tables' as it is."""
        return cls(**{f.name: getattr(counts, f.name) for f in dataclasses.fields(Allocation)})

    def to_dict(self) -> dict[str, Any]:
        """What `plan --json` prints: statistics are listed as tables, and `discoveries`
        follows `advice` (contract v1's order)."""
        out = super().to_dict()
        if self.synthesis is not None and self.synthesis_share is not None:
            out["synthesis"] = self.synthesis.to_dict(self.synthesis_share)
        if not (self.statistics or self.discoveries):
            return out
        out["tables"] += [s.to_dict() for s in self.statistics]
        items = list(out.items())
        at = list(out).index("advice") + 1
        discoveries = ("discoveries", [d.to_dict() for d in self.discoveries])
        return dict([*items[:at], discoveries, *items[at:]])


def allocate(plan: Plan) -> PlanAllocation:
    """The whole plan's allocation: the count tables' (`accounting.allocation.allocate`), and
    its statistics', discoveries' and synthesis' shares off the total first when it has any."""
    if not (plan.statistics or plan.discoveries or plan.postprocess.synthetic_share):
        return PlanAllocation.of_counts(allocate_counts(plan))
    check_accounting(plan)
    # issue 37.4: priced within the decimals the budget was typed as
    priced = _measured(spendable_plan(plan))
    accountant = plan_accountant(priced)  # resolved once per plan, and passed down
    allocation = allocate_with_statistics(priced, accountant)
    total = accountant.reported(allocation.total, plan.budget)
    return allocation if total == allocation.total else replace(allocation, total=total)


def plan_allocation(plan: Plan, allocation: Allocation | None = None) -> PlanAllocation:
    """`allocation` as the whole plan's: None allocates the plan; a count tables' `Allocation`
    (`accounting.allocation.allocate`, as code written before issue 26 calls it) stands for a
    plan without statistics or discoveries as it is."""
    if allocation is None:
        return allocate(plan)
    if isinstance(allocation, PlanAllocation):
        return allocation
    if plan.statistics or plan.discoveries:
        raise InternalError(
            "a plan with statistics or discovered domains needs its PlanAllocation "
            "(dprelease.stats.allocation.allocate), not the count tables' Allocation"
        )
    return PlanAllocation.of_counts(allocation)


def _measured(plan: Plan) -> Plan:
    """With a discovered domain the count tables' cells are unknown until the release, so
    their strategy cannot be chosen in advance: they are measured as listed."""
    if plan.discoveries:
        return replace(plan, budget=replace(plan.budget, strategy="workload"))
    return plan


# --- the shares -------------------------------------------------------------------------------


def _lock(plan: Plan, accountant: Accountant, statistic: StatisticTable) -> Fraction | None:
    """A locked statistic's value in the additive unit."""
    table = statistic.table
    if table.rho is not None:
        return Fraction(table.rho)
    if table.epsilon is None:
        return None
    # the exponential mechanism's bounded range: ρ = ε²/8 under zcdp (the kind's divisor)
    bounded_range = kind_of(statistic.stat).zcdp_divisor == 8
    return accountant.of_epsilon(Fraction(table.epsilon), bounded_range)


def _table_lock(plan: Plan, accountant: Accountant, index: int) -> Fraction | None:
    spec = plan.tables[index]
    if spec.rho is not None:
        return Fraction(spec.rho)
    if spec.epsilon is None:
        return None
    return accountant.of_epsilon(Fraction(spec.epsilon))


def _weight(plan: Plan, weight: float) -> Fraction:
    return Fraction(1) if plan.budget.allocation == "equal" else Fraction(weight)


def _needs_delta(statistic: StatisticTable) -> bool:
    return kind_of(statistic.stat).needs_delta


@dataclass(frozen=True)
class Reservation:
    """What the statistics and discoveries take, and what is left for the count tables."""

    statistics: tuple[Share, ...]
    discoveries: tuple[Share, ...]
    left: Fraction  # for the counts, in the additive unit
    delta_left: Fraction | None  # the counts' δ (approx, advanced) or the conversion δ (zcdp)
    alpha: float | None  # the CKS order that certified the zcdp total (when given as ε)
    synthesis: Share | None = None  # issue 38.6: S of the total, set aside first


def _delta_parts(plan: Plan, accountant: Accountant) -> tuple[Fraction, Fraction, Fraction] | None:
    """(δ of a statistic that needs one, δ of a discovery, δ left): None under pure."""
    budget = plan.budget
    if not accountant.needs_delta or budget.delta is None:
        return None
    delta = Fraction(budget.delta)
    stats = sum(1 for s in plan.statistics if _needs_delta(s))
    stats += 1 if plan.postprocess.synthetic_share else 0  # its measurements may need δ
    discoveries = len(plan.discoveries)
    if accountant.splits_delta:
        each = delta / max(len(plan.tables) + stats + discoveries, 1)
        return each, each, delta - each * (stats + discoveries)
    each = delta / (discoveries + 1)
    return Fraction(0), each, delta - each * discoveries


def reserve(plan: Plan, accountant: Accountant, scale: Fraction = Fraction(1)) -> Reservation:
    """Shares of the statistics and discoveries (rounded down) and the rest for the counts;
    `scale` grows the total by what the accountant's composition saves (`spare_scale`)."""
    budget = plan.budget
    deltas = _delta_parts(plan, accountant)
    total, alpha = accountant.statistics_total(budget, None if deltas is None else deltas[2])
    total *= scale
    stat_locks = [_lock(plan, accountant, s) for s in plan.statistics]
    table_locks = [_table_lock(plan, accountant, i) for i in range(len(plan.tables))]
    locked = sum((v for v in (*stat_locks, *table_locks) if v is not None), Fraction(0))
    weights = [
        _weight(plan, s.table.weight)
        for s, lock in zip(plan.statistics, stat_locks, strict=True)
        if lock is None
    ]
    table_weights = [
        _weight(plan, plan.tables[i].weight) for i, v in enumerate(table_locks) if v is None
    ]
    parts = sum(weights, Fraction(0)) + sum(table_weights, Fraction(0)) + len(plan.discoveries)
    synthesis_share = plan.postprocess.synthetic_share
    synthesis = None if synthesis_share is None else total * Fraction(synthesis_share)
    room = total - locked - (synthesis or 0)
    if room <= 0 or parts <= 0:
        raise BudgetError(
            "The locked tables and statistics use all of the budget; lower their locks or "
            "raise the budget."
        )

    def share(value: Fraction, delta: Fraction | None) -> Share:
        amount = accountant.granted(value)
        if amount <= 0:
            raise BudgetError("The budget is too small to split among the statistics.")
        delta_value = None if delta is None else accountant.granted(delta)
        return Share(accountant.name, **accountant.unit_fields(amount), delta=delta_value)

    stat_shares = []
    for statistic, lock in zip(plan.statistics, stat_locks, strict=True):
        value = lock if lock is not None else room * _weight(plan, statistic.table.weight) / parts
        delta = deltas[0] if deltas is not None and _needs_delta(statistic) else None
        stat_shares.append(share(value, delta if accountant.splits_delta else None))
    disc_shares = [
        share(room / parts, deltas[1] if deltas is not None else None) for _ in plan.discoveries
    ]
    synthesis_part = None
    if synthesis is not None:
        synthesis_part = share(synthesis, deltas[0] if deltas and accountant.splits_delta else None)
    parts_spent = (*stat_shares, *disc_shares, *([synthesis_part] if synthesis_part else []))
    spent = accountant.exact_total(s.amount for s in parts_spent)
    left = total - spent
    if plan.tables and left <= 0:
        raise BudgetError("The statistics use all of the budget; nothing is left for the counts.")
    delta_left = None if deltas is None else deltas[2]
    return Reservation(
        tuple(stat_shares), tuple(disc_shares), left, delta_left, alpha, synthesis_part
    )


# --- composing ------------------------------------------------------------------------------


def _counts_plan(plan: Plan, accountant: Accountant, reservation: Reservation) -> Plan:
    """The plan of the count tables alone, with what the statistics left as its budget."""
    new = accountant.counts_budget(plan.budget, reservation.left, reservation.delta_left)
    return dataclasses.replace(plan, budget=new, statistics=(), discoveries=())


def _parts(
    reservation: Reservation, counts: Allocation | None, costs: Sequence[Share]
) -> ReleaseParts:
    """What the release is composed of, as the accountant composes it."""
    measured = counts.measurements if counts is not None else ()
    return ReleaseParts(
        statistics=[(c.epsilon, c.delta, c.rho) for c in costs],
        counts=None if counts is None else counts.total,
        count_rhos=[m.rho or 0.0 for m in measured],
        delta_left=reservation.delta_left,
        order=reservation.alpha,
    )


def allocate_with_statistics(plan: Plan, accountant: Accountant) -> PlanAllocation:
    """The allocation of a plan with statistics or discoveries by its settled `accountant`
    (the plan's `accounting` may still say `auto`; see the module docstring). Where the
    accountant's composition states less than the plan's total (Rényi with ε-DP
    statistics), every share grows by what it saves (`spare_scale`), and the grown release
    is kept only if its exact guarantee still fits."""
    allocation, parts = _allocate_at(plan, accountant, Fraction(1))
    scale = accountant.spare_scale(parts, plan.budget)
    for _ in range(SPARE_TRIES):
        if scale <= 1:
            break
        grown, _ = _allocate_at(plan, accountant, scale)
        if accountant.release_fits(grown.total, plan.budget):
            return replace(grown, total=accountant.release_checked(grown.total, plan.budget))
        scale = 1 + (scale - 1) / 2  # the shares' rounding went over: spend half as much
    return replace(allocation, total=accountant.release_checked(allocation.total, plan.budget))


SPARE_TRIES = 4


def _allocate_at(
    plan: Plan, accountant: Accountant, scale: Fraction
) -> tuple[PlanAllocation, ReleaseParts]:
    """The allocation with the total grown by `scale`, its guarantee not yet checked."""
    reservation = reserve(plan, accountant, scale)
    statistics = tuple(
        StatisticBudget(
            s,
            math.prod(plan.schema[c].size for c in s.by),
            calibrate(s, share, context(plan, s.by)),
            plan.budget.confidence,
        )
        for s, share in zip(plan.statistics, reservation.statistics, strict=True)
    )
    discoveries = tuple(
        DiscoveryBudget(d, DISCOVERY.calibrate(d.spec, share, context(plan, ())))
        for d, share in zip(plan.discoveries, reservation.discoveries, strict=True)
    )
    counts = None
    if plan.tables:
        counts = allocate_counts(_counts_plan(plan, accountant, reservation), accountant)
    costs = [s.cost for s in statistics] + [d.mechanism.cost for d in discoveries]
    synthesis = None
    if reservation.synthesis is not None:
        synthesis = calibrate_synthesis(plan, reservation.synthesis)
        costs += synthesis.costs
    parts = _parts(reservation, counts, costs)
    total = accountant.release_guarantee(parts)
    advice = () if counts is None else counts.advice
    allocation = PlanAllocation(
        accounting=accountant.name,
        allocation=plan.budget.allocation,
        confidence=plan.budget.confidence,
        total=total,
        tables=() if counts is None else counts.tables,
        measurements=() if counts is None else counts.measurements,
        strategy="workload" if counts is None else counts.strategy,
        accountant_choice=None if counts is None else counts.accountant_choice,
        required=None if counts is None else counts.required,
        advice=advice,
        statistics=statistics,
        discoveries=discoveries,
        synthesis=synthesis,
        synthesis_share=plan.postprocess.synthetic_share,
    )
    return allocation, parts
