"""Splitting the total budget across tables, and what each share buys (no data needed).

`allocate(plan)` is what `dprelease plan` prints: per table its budget, mechanism, noise and
margin of error, and the composed guarantee of the whole release. Shares are computed in the
accountant's additive unit (ε for pure/advanced, ρ for zCDP, ε and δ for approx); locked
tables keep their value and the others share what is left. Float shares are then nudged down
until an exact (`Fraction`) sum fits the total, and the composed total is checked once more,
so an allocation can never spend more than the plan's target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.allocated import Allocation, TableBudget, priced
from dprelease.accounting.composition import (
    Guarantee,
    advanced_or_basic,
    basic_composition,
    check_within,
    exact_sum,
    reported_total,
    zcdp_guarantee,
)
from dprelease.accounting.mechanisms import (
    DISCRETE_GAUSSIAN,
    DISCRETE_LAPLACE,
    Mechanism,
    Noise,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    laplace_epsilon,
    laplace_scale,
)
from dprelease.accounting.shares import (
    additive_shares,
    additive_total,
    advanced_shares,
    delta_shares,
    fixed_shares,
)
from dprelease.accounting.targets import (
    AdvancedTarget,
    ApproxTarget,
    Target,
    ZcdpTarget,
    forced_accounting,
    settled,
    target_of,
)
from dprelease.errors import BudgetError, InternalError, PlanError
from dprelease.plan.model import ConcreteAccounting, Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec, sensitivity

if TYPE_CHECKING:
    from dprelease.strategy.accountant import AccountantChoice

__all__ = ["Allocation", "TableBudget", "allocate", "delta_advice", "resolve_accounting"]

MECHANISM_OF: dict[str, Mechanism] = {
    "pure": DISCRETE_LAPLACE,
    "advanced": DISCRETE_LAPLACE,
    "approx": DISCRETE_GAUSSIAN,  # integer noise; the set certified by its PLD (dgauss_pld)
    "zcdp": DISCRETE_GAUSSIAN,
}
WEAK_EPSILON = 5.0
STRATEGY_ACCOUNTANTS = ("pure", "zcdp", "approx")


# --- the accountants ---------------------------------------------------------------------


def _required(target: Target, fixed: dict[int, float], deltas: Sequence[float]) -> Guarantee:
    """The composed guarantee of the fixed shares alone (what the targets need)."""
    values = list(fixed.values())
    if isinstance(target, ZcdpTarget):
        return zcdp_guarantee(values, target.delta)
    if isinstance(target, AdvancedTarget):
        return advanced_or_basic(values, target.delta)
    if isinstance(target, ApproxTarget):
        return basic_composition(values, [deltas[i] for i in fixed])
    return basic_composition(values)


def _check_targets_fit(plan: Plan, target: Target, required: Guarantee) -> None:
    if isinstance(target, ZcdpTarget) and plan.budget.rho is not None:
        if required.rho is not None and required.rho > target.rho:
            raise BudgetError(
                f"Budget too small for the targets: they need rho ≥ {required.rho:.6g} but the "
                f"plan gives {target.rho:g}; raise budget.rho or loosen the targets."
            )
        return
    epsilon = target.epsilon if not isinstance(target, ZcdpTarget) else plan.budget.epsilon
    if epsilon is not None and required.epsilon is not None and required.epsilon > epsilon:
        at = f" at delta {plan.budget.delta:g}" if plan.budget.delta is not None else ""
        raise BudgetError(
            f"Budget too small for the targets: they need epsilon ≥ {required.epsilon:.6g}{at} "
            f"but the plan gives {epsilon:g}; raise budget.epsilon or loosen the targets."
        )


# --- putting it together -------------------------------------------------------------------


def _table_budget(
    plan: Plan, spec: TableSpec, sens: Sensitivity, share: float, delta_share: float
) -> TableBudget:
    """The noise a share buys, and what it costs after rounding the scale up."""
    accounting = plan.budget.accounting
    mechanism = MECHANISM_OF[accounting].name
    epsilon = delta = rho = None
    if accounting == "zcdp":
        noise = Noise(mechanism, discrete_gaussian_sigma(share, sens.l2_squared))
        rho = share
        check_within(discrete_gaussian_rho(noise.scale, sens.l2_squared), Fraction(share), "rho")
    elif accounting == "approx":  # the set is priced at once (`_gaussian_listed`)
        raise InternalError("approx tables are priced by gaussian_set, not one by one")
    else:
        noise = Noise(mechanism, laplace_scale(share, sens.l1))
        epsilon = share
        check_within(laplace_epsilon(noise.scale, sens.l1), Fraction(share), "epsilon")
    alpha = 1 - plan.budget.confidence
    return priced(
        spec,
        spec.cells(plan.schema),
        sens,
        noise,
        alpha,
        budget=(epsilon, delta, rho),
        measured_as=spec.name,
    )


def _compose(target: Target, shares: Sequence[float], deltas: Sequence[float]) -> Guarantee:
    """The guarantee of the whole release, checked against the plan's target."""
    if isinstance(target, ZcdpTarget):
        check_within(exact_sum(shares), Fraction(target.rho), "rho")
        guarantee = zcdp_guarantee(shares, target.delta, target.cks_order)
        if target.epsilon is not None:
            check_within(Fraction(guarantee.epsilon), Fraction(target.epsilon), "epsilon")
        return guarantee
    if isinstance(target, AdvancedTarget):
        guarantee = advanced_or_basic(shares, target.delta)
    elif isinstance(target, ApproxTarget):
        guarantee = basic_composition(shares, deltas)
    else:
        guarantee = Guarantee(epsilon=basic_composition(shares).epsilon, delta=None)
    check_within(Fraction(guarantee.epsilon), Fraction(target.epsilon), "epsilon")
    return guarantee


def _advice(plan: Plan) -> list[str]:
    notes = []
    if plan.budget.allocation != "targets" and any(s.target for s in plan.tables):
        notes.append("Accuracy targets are used only with allocation: targets; they are ignored.")
    if plan.budget.allocation == "equal" and any(s.weight != 1 for s in plan.tables):
        notes.append("Table weights are ignored under allocation: equal.")
    if plan.budget.accounting == "pure" and plan.budget.delta is not None:
        notes.append("budget.delta is ignored under pure accounting (the guarantee has δ = 0).")
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


def _bound_notes(plan: Plan, accounting: str, choice: AccountantChoice | None) -> list[str]:
    """What the resource bound (issue 25) changed: the candidates searched, the accountant."""
    if plan.budget.strategy != "auto" or accounting not in STRATEGY_ACCOUNTANTS:
        return []
    from dprelease.accounting.strategy_allocation import workload_of
    from dprelease.strategy.select import bound_note

    notes = []
    if plan.budget.accounting == "auto" and choice is None and forced_accounting(plan) is None:
        notes.append(LISTED_CHOICE_NOTE)
    note = bound_note(plan.schema, workload_of(plan))
    if note is not None:
        notes.append(note)
    return notes


def _strategy_blocker(plan: Plan, accounting: str) -> str | None:
    """Why `strategy: auto` cannot choose the measurements here (None: it can)."""
    if plan.budget.strategy != "auto":
        return None  # the user asked for the tables as listed: no advice needed
    if plan.budget.allocation != "optimal":
        return f"allocation: {plan.budget.allocation}"
    if any(s.locked for s in plan.tables):
        return "locked tables"
    if accounting not in STRATEGY_ACCOUNTANTS:
        return f"{accounting} accounting"
    return None


def resolve_accounting(
    plan: Plan, sens: Sensitivity
) -> tuple[ConcreteAccounting, AccountantChoice | None]:
    """The accountant to use: the plan's, or under `auto` the one with the least error."""
    forced = forced_accounting(plan)
    if forced is not None:
        return forced, None
    epsilon, delta = plan.budget.epsilon, plan.budget.delta
    if epsilon is None or delta is None:  # forced_accounting covers these; for the type checker
        raise BudgetError("accounting: auto needs budget.epsilon and budget.delta.")
    # the strategy's optimiser needs scipy: imported only when a choice is to be made
    from dprelease.accounting.strategy_allocation import workload_of
    from dprelease.strategy.accountant import choose_accountant

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
    return choice.winner, choice


LISTED_CHOICE_NOTE = (
    "accounting: auto compared the accountants with the tables measured as listed (the "
    "strategy's error model is beyond its limit)."
)


def _listed_winner(plan: Plan, sens: Sensitivity) -> ConcreteAccounting:
    """The accountant whose tables, measured as listed, have the least weighted per-cell
    variance (Σ weight × variance): no error model, only the listed allocations. approx is
    certified (a PLD, and dp_accounting's import) only if its uncertified variances, a lower
    bound, could win."""
    from dprelease.accounting.gaussian_set import continuous_variances

    listed = replace(plan, budget=replace(plan.budget, strategy="workload"))

    def error(variances: Sequence[float]) -> float:
        return math.fsum(s.weight * v for s, v in zip(plan.tables, variances, strict=True))

    def resolved(accounting: ConcreteAccounting) -> tuple[Plan, Target]:
        settled_plan = replace(listed, budget=replace(listed.budget, accounting=accounting))
        return settled_plan, target_of(settled_plan.budget, accounting)

    errors: dict[ConcreteAccounting, float] = {}
    for accounting in ("pure", "zcdp"):
        settled_plan, target = resolved(accounting)
        tables = _listed_allocation(settled_plan, sens, target, None, []).tables
        errors[accounting] = error([t.noise.variance for t in tables])
    approx_plan, approx_target = resolved("approx")
    if not isinstance(approx_target, ApproxTarget):
        raise InternalError("approx without its target")
    bound = continuous_variances(approx_plan, sens, approx_target)
    if bound is None or error(bound) < min(errors.values()):
        tables = _listed_allocation(approx_plan, sens, approx_target, None, []).tables
        errors["approx"] = error([t.noise.variance for t in tables])
    return min(errors, key=lambda a: errors[a])


def _statistics_accounting(plan: Plan, sens: Sensitivity) -> Plan:
    """A plan with statistics, its `accounting: auto` settled.

    With a discovered domain the count tables' cells are unknown until the release, so their
    strategy cannot be chosen in advance: they are measured as listed, under zcdp (discovery
    is (ε, δ)-DP, so never pure). Otherwise the count tables' own choice; statistics alone:
    pure."""
    if plan.discoveries:
        plan = replace(plan, budget=replace(plan.budget, strategy="workload"))
    if plan.budget.accounting != "auto":
        return plan
    accounting = forced_accounting(plan)
    if accounting is None:
        if plan.discoveries:
            accounting = "zcdp"
        elif plan.tables:
            accounting = resolve_accounting(replace(plan, statistics=(), discoveries=()), sens)[0]
        else:
            accounting = "pure"
    return replace(plan, budget=replace(plan.budget, accounting=accounting))


def allocate(plan: Plan) -> Allocation:
    """Split the plan's budget, price each measurement's noise, and compose the release.

    Under `strategy: auto` with `allocation: optimal` (the defaults) the measurements are
    chosen for the published tables (`strategy_allocation`); otherwise every table is measured
    as listed and the allocation method splits the budget among them. The total is reported
    as `reported_total` says (a budget used in full is the plan's target, not a float below)."""
    allocation = _allocate(plan)
    budget = plan.budget
    total = reported_total(allocation.total, budget.epsilon, budget.delta, budget.rho)
    return allocation if total == allocation.total else replace(allocation, total=total)


def _allocate(plan: Plan) -> Allocation:
    sens = sensitivity(plan.unit, plan.neighbors)
    if plan.statistics or plan.discoveries:  # issue 16: their shares come off the total first
        from dprelease.stats.allocation import allocate_with_statistics

        return allocate_with_statistics(_statistics_accounting(plan, sens), allocate)
    accounting, choice = resolve_accounting(plan, sens)
    resolved = replace(plan, budget=replace(plan.budget, accounting=accounting))
    target = target_of(resolved.budget, accounting)
    blocker = _strategy_blocker(resolved, accounting)
    notes = _advice(plan) + _bound_notes(plan, accounting, choice)
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
    target: ApproxTarget,
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
    alpha = 1 - plan.budget.confidence
    tables = []
    for spec, sigma in zip(plan.tables, found.sigmas, strict=True):
        alone = min(table_epsilon(sigma, sens, target.delta), found.total.epsilon)
        tables.append(
            priced(
                spec,
                spec.cells(plan.schema),
                sens,
                Noise(DISCRETE_GAUSSIAN.name, sigma),
                alpha,
                budget=(alone, target.delta, None),
                measured_as=spec.name,
            )
        )
    return Allocation(
        accounting="approx",
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
    if isinstance(target, ApproxTarget):
        return _gaussian_listed(plan, sens, target, choice, notes)
    if isinstance(target, ApproxTarget):
        deltas = delta_shares(plan, target)
    else:
        deltas = [0.0] * len(plan.tables)
    fixed = fixed_shares(plan, sens, deltas)
    required = None
    if plan.budget.allocation == "targets":
        required = _required(target, dict(fixed), deltas)
        _check_targets_fit(plan, target, required)
    if isinstance(target, AdvancedTarget):
        shares = advanced_shares(plan, target, sens, fixed)
    else:
        shares = additive_shares(plan, additive_total(target), sens, fixed, deltas)
    tables = tuple(
        _table_budget(plan, spec, sens, share, delta)
        for spec, share, delta in zip(plan.tables, shares, deltas, strict=True)
    )
    total = _compose(target, shares, deltas)
    return Allocation(
        accounting=settled(plan.budget),
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
