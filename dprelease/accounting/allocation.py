"""Splitting the total budget across tables, and what each share buys (no data needed).

`allocate(plan)` prices the count tables: per table its budget, mechanism, noise and margin of
error, and their composed guarantee. A whole plan, statistics included, is allocated by
`dprelease.stats.allocation.allocate` (what `dprelease plan` prints), which hands the count
tables here. Shares are computed in the
accountant's additive unit (ε for pure/advanced, ρ for zCDP, ε and δ for approx); locked
tables keep their value and the others share what is left. Float shares are then nudged down
until an exact (`Fraction`) sum fits the total, and the composed total is checked once more,
so an allocation can never spend more than the plan's target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import Accountant, Target
from dprelease.accounting.accountants.registry import accountant as accountant_named
from dprelease.accounting.accountants.registry import check_plan as check_accounting
from dprelease.accounting.accountants.registry import (
    chosen,
    first,
    forced,
    is_auto,
    strategy_accountants,
)
from dprelease.accounting.allocated import Allocation, TableBudget, priced
from dprelease.accounting.composition import Guarantee
from dprelease.accounting.mechanisms import Noise
from dprelease.accounting.shares import (
    additive_shares,
    advanced_shares,
    delta_shares,
    fixed_shares,
)
from dprelease.accounting.typed_budget import spendable_plan
from dprelease.accounting.weighted import as_counts, weighted_back
from dprelease.errors import BudgetError, InternalError, PlanError
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec, sensitivity

if TYPE_CHECKING:
    from dprelease.accounting.auto import AccountantChoice

__all__ = [
    "Allocation",
    "TableBudget",
    "allocate",
    "delta_advice",
    "plan_accountant",
    "resolve_accounting",
]

WEAK_EPSILON = 5.0


# --- the accountants ---------------------------------------------------------------------


def _required(target: Target, fixed: dict[int, float], deltas: Sequence[float]) -> Guarantee:
    """The composed guarantee of the fixed shares alone (what the targets need)."""
    return target.accountant.required(target, list(fixed.values()), [deltas[i] for i in fixed])


def _check_targets_fit(plan: Plan, target: Target, required: Guarantee) -> None:
    if target.epsilon is None:  # the budget was given as ρ (zcdp): the targets' ρ against it
        if required.rho is not None and required.rho > target.amount:
            raise BudgetError(
                f"Budget too small for the targets: they need rho ≥ {required.rho:.6g} but the "
                f"plan gives {target.amount:g}; raise budget.rho or loosen the targets."
            )
        return
    epsilon = target.epsilon  # under zcdp the plan's ε, when ρ was derived from it
    if epsilon is not None and required.epsilon is not None and required.epsilon > epsilon:
        at = f" at delta {plan.budget.delta:g}" if plan.budget.delta is not None else ""
        raise BudgetError(
            f"Budget too small for the targets: they need epsilon ≥ {required.epsilon:.6g}{at} "
            f"but the plan gives {epsilon:g}; raise budget.epsilon or loosen the targets."
        )


# --- putting it together -------------------------------------------------------------------


def _table_budget(
    plan: Plan, accountant: Accountant, spec: TableSpec, sens: Sensitivity, share: float
) -> TableBudget:
    """The noise a share buys, and what it costs after rounding the scale up."""
    alpha = 1 - plan.budget.confidence
    return priced(
        spec,
        spec.cells(plan.schema),
        sens,
        accountant.table_noise(share, sens),
        alpha,
        budget=accountant.fields(share),
        measured_as=spec.name,
    )


def _advice(plan: Plan) -> list[str]:
    notes = []
    if plan.budget.allocation != "targets" and any(s.target for s in plan.tables):
        notes.append("Accuracy targets are used only with allocation: targets; they are ignored.")
    if plan.budget.allocation == "equal" and any(s.weight != 1 for s in plan.tables):
        notes.append("Table weights are ignored under allocation: equal.")
    fixed = chosen(plan.budget)
    if fixed is not None and not fixed.needs_delta and plan.budget.delta is not None:
        notes.append(f"δ is not used under {fixed.name} accounting: its guarantee has δ = 0.")
    if plan.invariants:  # issue 27: said wherever the allocation is shown
        names = ", ".join(spec.name for spec in plan.invariants)
        notes.append(
            f"Invariant tables ({names}) are published exact, without noise and outside the "
            "differential privacy guarantee; they take no budget, and the other tables are "
            "made consistent with them."
        )
    if plan.structural_zeros:
        notes.append(
            f"{len(plan.structural_zeros)} structural zero(s): impossible cells are released "
            "as 0 with margin 0, and the other tables are made consistent with them."
        )
    return notes


def _weak(total: Guarantee) -> list[str]:
    if total.epsilon is not None and total.epsilon > WEAK_EPSILON:
        return [
            f"The release's epsilon is {total.epsilon:.3g}: above {WEAK_EPSILON:g} the "
            "guarantee is weak; consider a smaller budget."
        ]
    return []


def delta_advice(delta: float | None, rows: int) -> tuple[str, ...]:
    """Advice from the data size (for the data holder: it depends on the true row count).

    δ is the chance that the guarantee fails outright; at δ ≥ 1/n one of n people can expect
    to be exposed, so δ should be far below 1/n.
    """
    if delta is None or rows <= 0 or delta < 1 / rows:
        return ()
    return (
        f"delta = {delta:g} is not far below 1/n for this data set; "
        "use a much smaller delta (e.g. 1e-10).",
    )


def _bound_notes(plan: Plan, accountant: Accountant, choice: AccountantChoice | None) -> list[str]:
    """What the resource bound (issue 25) changed: the candidates searched, the accountant."""
    if plan.budget.strategy != "auto" or not accountant.chooses_strategy:
        return []
    from dprelease.accounting.strategy_allocation import workload_of
    from dprelease.strategy.select import bound_note

    notes = []
    if is_auto(plan.budget.accounting) and choice is None and forced(plan) is None:
        notes.append(LISTED_CHOICE_NOTE)
    note = bound_note(plan.schema, workload_of(plan))
    if note is not None:
        notes.append(note)
    return notes


def _strategy_blocker(plan: Plan, accountant: Accountant) -> str | None:
    """Why `strategy: auto` cannot choose the measurements here (None: it can)."""
    if plan.budget.strategy != "auto":
        return None  # the user asked for the tables as listed: no advice needed
    if plan.budget.allocation != "optimal":
        return f"allocation: {plan.budget.allocation}"
    if any(s.locked for s in plan.tables):
        return "locked tables"
    if not accountant.chooses_strategy:
        return f"{accountant.name} accounting"
    return None


def resolve_accounting(plan: Plan, sens: Sensitivity) -> tuple[Accountant, AccountantChoice | None]:
    """The accountant to use: the plan's, or under `auto` the one with the least error."""
    only = forced(plan)
    if only is not None:
        return only, None
    epsilon, delta = plan.budget.epsilon, plan.budget.delta
    if epsilon is None or delta is None:  # `forced` covers these; for the type checker
        raise BudgetError("accounting: auto needs budget.epsilon and budget.delta.")
    # the strategy's optimiser needs scipy: imported only when a choice is to be made
    from dprelease.accounting.auto import choose_accountant
    from dprelease.accounting.strategy_allocation import workload_of

    kind = plan.budget.strategy if plan.budget.allocation == "optimal" else "workload"
    if any(s.locked for s in plan.tables):
        kind = "workload"
    from dprelease.accounting.approx_noise import certified_choice
    from dprelease.strategy.cost import StrategyTooLarge

    try:
        choice = choose_accountant(plan.schema, workload_of(plan), sens, epsilon, delta, kind)
    except StrategyTooLarge:  # the error model is beyond the bound: compare as listed
        return _listed_winner(plan, sens), None
    choice = certified_choice(choice, sens)
    return accountant_named(choice.winner), choice


def plan_accountant(plan: Plan) -> Accountant:
    """A whole plan's accountant, settled once: the plan's own, else `auto`'s. With a
    discovered domain, one in ρ that composes the discoveries' (ε, δ) with the counts (never
    pure); else the count tables' own choice; statistics alone: one without δ (pure)."""
    accountant = forced(plan)
    if accountant is not None:
        return accountant
    if plan.discoveries:
        return first(lambda a: a.hosts_discovery, "for discoveries")
    if plan.tables:
        counts = replace(plan, statistics=(), discoveries=())
        return resolve_accounting(counts, sensitivity(plan.unit, plan.neighbors))[0]
    return first(lambda a: not a.needs_delta, "without δ")


LISTED_CHOICE_NOTE = (
    "accounting: auto compared the accountants with the tables measured as listed (the "
    "strategy's error model is beyond its limit)."
)


def _listed_winner(plan: Plan, sens: Sensitivity) -> Accountant:
    """The accountant whose tables, measured as listed, have the least weighted per-cell
    variance (Σ weight × variance): no error model, only the listed allocations. A set priced
    at once (approx: a PLD, and dp_accounting's import) is priced only if its uncertified
    variances, a lower bound, could win."""
    from dprelease.accounting.gaussian_set import continuous_variances

    listed = replace(plan, budget=replace(plan.budget, strategy="workload"))

    def error(variances: Sequence[float]) -> float:
        return math.fsum(s.weight * v for s, v in zip(plan.tables, variances, strict=True))

    def settled_plan(accountant: Accountant) -> Plan:
        return replace(listed, budget=replace(listed.budget, accounting=accountant.name))

    def priced_error(accountant: Accountant) -> float:
        resolved = settled_plan(accountant)
        target = accountant.target(resolved.budget)
        tables = _listed_allocation(resolved, sens, target, None, []).tables
        return error([t.noise.variance for t in tables])

    candidates = strategy_accountants(plan.budget.delta)
    errors = {a: priced_error(a) for a in candidates if not a.priced_as_set}
    for accountant in (a for a in candidates if a.priced_as_set):
        resolved = settled_plan(accountant)
        bound = continuous_variances(resolved, sens, accountant.target(resolved.budget))
        if bound is None or not errors or error(bound) < min(errors.values()):
            errors[accountant] = priced_error(accountant)
    return min(errors, key=lambda a: errors[a])


def allocate(plan: Plan, accountant: Accountant | None = None) -> Allocation:
    """Split the plan's budget, price each measurement's noise, and compose the release.

    Under `strategy: auto` with `allocation: optimal` (the defaults) the measurements are
    chosen for the published tables (`strategy_allocation`); otherwise every table is measured
    as listed and the allocation method splits the budget among them. The total is reported
    as `Accountant.reported` says (a budget used in full is the plan's target, not a float below).

    The count tables only: a plan with statistics or discovered domains is allocated by
    `dprelease.stats.allocation.allocate` (their shares come off the total first, issue 16),
    which hands its count tables back here with the `accountant` it settled (None: settled
    here)."""
    if plan.statistics or plan.discoveries:
        raise InternalError(
            "accounting.allocation.allocate prices count tables only; a plan with statistics or "
            "discovered domains is allocated by dprelease.stats.allocation.allocate"
        )
    check_accounting(plan)
    # issue 37.8: survey weights; 37.4: the typed decimals bound the spend
    allocation = weighted_back(plan, _allocate(as_counts(spendable_plan(plan)), accountant))
    total = Accountant.reported(allocation.total, plan.budget)
    return allocation if total == allocation.total else replace(allocation, total=total)


def _allocate(plan: Plan, given: Accountant | None) -> Allocation:
    sens = sensitivity(plan.unit, plan.neighbors)
    accountant, choice = (given, None) if given is not None else resolve_accounting(plan, sens)
    resolved = replace(plan, budget=replace(plan.budget, accounting=accountant.name))
    target = accountant.target(resolved.budget)
    blocker = _strategy_blocker(resolved, accountant)
    notes = _advice(plan) + _bound_notes(plan, accountant, choice)
    if plan.budget.strategy == "auto" and blocker is None:
        from dprelease.accounting.strategy_allocation import strategy_allocation

        try:
            allocation = strategy_allocation(resolved, sens, target, choice, ())
        except PlanError as error:  # e.g. a hierarchy that branches: measure as listed
            notes.append(
                f"strategy: auto does not apply ({error}); the tables are measured as listed."
            )
        else:
            return replace(allocation, advice=tuple(notes + _weak(allocation.total)))
    return _listed_allocation(resolved, sens, target, choice, notes)


def _gaussian_listed(
    plan: Plan,
    sens: Sensitivity,
    target: Target,
    choice: AccountantChoice | None,
    notes: list[str],
) -> Allocation:
    """approx, tables as listed: one set of discrete Gaussians (`gaussian_set`) certified by
    their PLD, never Σ ε_i, Σ δ_i."""
    from dprelease.accounting.gaussian_set import gaussian_set, table_epsilon

    if any(s.delta is not None and s.epsilon is None for s in plan.tables):
        notes.append(
            "A table's delta alone is ignored under approx: the tables compose as one Gaussian "
            "mechanism at budget.delta (lock epsilon, with or without delta, instead)."
        )
    found = gaussian_set(plan, sens, target)
    delta = target.epsilon_delta()[1]
    mechanism = target.accountant.mechanism
    alpha = 1 - plan.budget.confidence
    tables = []
    for spec, sigma in zip(plan.tables, found.sigmas, strict=True):
        alone = min(table_epsilon(sigma, sens, delta), found.total.epsilon)
        tables.append(
            priced(
                spec,
                spec.cells(plan.schema),
                sens,
                Noise(mechanism.name, sigma),
                alpha,
                budget=(alone, delta, None),
                measured_as=spec.name,
            )
        )
    return Allocation(
        accounting=target.accountant.name,
        allocation=plan.budget.allocation,
        confidence=plan.budget.confidence,
        total=found.total,
        tables=tuple(tables),
        measurements=tuple(tables),
        strategy="workload",
        required=found.required,
        advice=tuple(notes + _weak(found.total)),
        accountant_choice=choice,
    )


def _listed_allocation(
    plan: Plan,
    sens: Sensitivity,
    target: Target,
    choice: AccountantChoice | None,
    notes: list[str],
) -> Allocation:
    """Every table measured as listed, the budget split by the plan's allocation method."""
    accountant = target.accountant
    if accountant.priced_as_set:
        return _gaussian_listed(plan, sens, target, choice, notes)
    zeros = [0.0] * len(plan.tables)
    deltas = delta_shares(plan, target) if accountant.splits_delta else zeros
    fixed = fixed_shares(plan, accountant, sens, deltas)
    required = None
    if plan.budget.allocation == "targets":
        required = _required(target, dict(fixed), deltas)
        _check_targets_fit(plan, target, required)
    if accountant.additive:
        shares = additive_shares(plan, accountant, target.amount, sens, fixed, deltas)
    else:
        shares = advanced_shares(plan, target, sens, fixed)
    tables = tuple(
        _table_budget(plan, accountant, spec, sens, share)
        for spec, share in zip(plan.tables, shares, strict=True)
    )
    total = accountant.checked(target, shares, deltas)
    return Allocation(
        accounting=accountant.name,
        allocation=plan.budget.allocation,
        confidence=plan.budget.confidence,
        total=total,
        tables=tables,
        measurements=tables,
        strategy="workload",
        required=required,
        advice=tuple(notes + _weak(total)),
        accountant_choice=choice,
    )
