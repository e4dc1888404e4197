"""The allocation under `strategy: auto`: measure the marginals the strategy chose (issue 10).

`dprelease.strategy.select_strategy` picks which marginals to measure and their budget so
that the least-squares estimates of the published tables have the least weighted error.
Here that choice becomes an `Allocation`: one `TableBudget` per measurement (a `TableSpec`
over plan columns, in plan order) and one per published table, whose `noise` is the error of
its least-squares estimate (zero mean, variance expected_rmse²): a Gaussian of that σ under
zcdp and approx, a discrete Laplace of that variance under pure (a sum of independent discrete
Laplace noises has lighter tails than one of the same variance, so its margin is conservative).
The composed guarantee:

- pure: ε = Σ ε_A, exact;
- zcdp: ρ = Σ ρ_A, exact, converted once by the CKS bound;
- approx: the measurements are discrete Gaussians whose σ_A the analytic Gaussian of L2
  sensitivity √(Σ Δ₂²/σ_A²) shaped, times the least factor their PLD certifies at (ε, δ)
  (`approx_noise`, `dgauss_pld`); never a sum of per-table ε and δ.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dprelease.accounting.allocated import Allocation, TableBudget, equivalent_noise, priced
from dprelease.accounting.composition import (
    Guarantee,
    check_within,
    exact_sum,
    round_up,
    zcdp_guarantee,
    zcdp_to_epsilon,
)
from dprelease.accounting.mechanisms import laplace_epsilon
from dprelease.accounting.targets import ApproxTarget, PureTarget, Target, ZcdpTarget
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec
from dprelease.postprocess.subtables import reduce_key
from dprelease.strategy.accountant import AccountantChoice
from dprelease.strategy.select import Strategy, WorkloadTable, select_strategy


def workload_of(plan: Plan) -> tuple[WorkloadTable, ...]:
    return tuple(WorkloadTable(s.name, s.by, s.weight) for s in plan.tables)


def strategy_for(plan: Plan, sens: Sensitivity, target: Target) -> Strategy:
    """The strategy of `plan.budget.strategy` under the target's accountant."""
    tables = workload_of(plan)
    kind = plan.budget.strategy
    if isinstance(target, PureTarget):
        return select_strategy(plan.schema, tables, sens, "pure", target.epsilon, None, kind)
    if isinstance(target, ZcdpTarget):
        epsilon = target.epsilon or zcdp_to_epsilon(target.rho, target.delta)[0]
        return select_strategy(
            plan.schema, tables, sens, "zcdp", epsilon, target.delta, kind, rho=target.rho
        )
    if isinstance(target, ApproxTarget):
        from dprelease.accounting.approx_noise import certified_strategy

        return certified_strategy(
            select_strategy(
                plan.schema, tables, sens, "approx", target.epsilon, target.delta, kind
            ),
            sens,
        )
    raise InternalError("the strategy has no advanced-composition accountant")


def _unique(name: str, taken: set[str]) -> str:
    candidate, k = name, 2
    while candidate in taken:
        candidate, k = f"{name}_{k}", k + 1
    taken.add(candidate)
    return candidate


def _budget_fields(
    strategy: Strategy, share: float
) -> tuple[float | None, float | None, float | None]:
    """(ε, δ, ρ) of one measurement: its share where it is one of those units."""
    if strategy.accounting == "pure":
        return share, None, None
    if strategy.accounting == "zcdp":
        return None, None, share
    return None, None, None  # approx: the set is one Gaussian; no per-measurement (ε, δ)


def _measurements(plan: Plan, strategy: Strategy, alpha: float) -> tuple[TableBudget, ...]:
    by_key = {reduce_key(plan.schema, s.by): s.name for s in plan.tables}
    taken = {s.name for s in plan.tables}
    out = []
    for m in strategy.measurements:
        by = reduce_key(plan.schema, m.by)
        name = by_key.get(by) or _unique(m.name, taken)
        spec = TableSpec(name=name, by=by)
        out.append(
            priced(
                spec,
                m.cells,
                m.sensitivity,
                m.noise,
                alpha,
                budget=_budget_fields(strategy, m.share),
                measured_as=name,
            )
        )
    return tuple(out)


def _published(
    plan: Plan, strategy: Strategy, measurements: tuple[TableBudget, ...], alpha: float
) -> tuple[TableBudget, ...]:
    measured = {reduce_key(plan.schema, m.spec.by): m.name for m in measurements}
    mechanism = measurements[0].noise.mechanism
    out = []
    for spec in plan.tables:
        accuracy = strategy.table(spec.name)
        if not math.isfinite(accuracy.expected_rmse):
            raise InternalError(f"table {spec.name!r} is not estimable from the measurements")
        out.append(
            priced(
                spec,
                spec.cells(plan.schema),
                measurements[0].sensitivity,
                equivalent_noise(mechanism, accuracy.expected_rmse**2),
                alpha,
                expected_rmse=accuracy.expected_rmse,
                measured_as=measured.get(reduce_key(plan.schema, spec.by)),
            )
        )
    return tuple(out)


def _guarantee(
    strategy: Strategy, target: Target, measurements: tuple[TableBudget, ...]
) -> Guarantee:
    """The composed guarantee of the measurements, checked against the target."""
    if isinstance(target, PureTarget):
        spent = exact_sum(
            float(laplace_epsilon(m.noise.scale, m.sensitivity.l1)) for m in measurements
        )
        check_within(spent, Fraction(target.epsilon), "epsilon")
        return Guarantee(epsilon=round_up(spent), delta=None)
    if isinstance(target, ZcdpTarget):
        rhos = [float(m.rho) for m in measurements if m.rho is not None]
        check_within(exact_sum(rhos), Fraction(target.rho), "rho")
        return zcdp_guarantee(rhos, target.delta, target.cks_order)
    if isinstance(target, ApproxTarget):
        from dprelease.accounting.dgauss_pld import certify

        sigmas = [m.noise.scale for m in measurements]
        found = certify(sigmas, measurements[0].sensitivity, target.epsilon, target.delta)
        if found.sigmas != tuple(sigmas):  # the strategy's σ's were certified already
            raise InternalError("approx measurements drawn with uncertified noise")
        return Guarantee(epsilon=found.epsilon, delta=target.delta, composition=found.method)
    raise InternalError("the strategy has no advanced-composition accountant")


def strategy_allocation(
    plan: Plan,
    sens: Sensitivity,
    target: Target,
    choice: AccountantChoice | None,
    advice: tuple[str, ...],
) -> Allocation:
    """Measurements and published tables under `strategy: auto` and `allocation: optimal`."""
    strategy = (
        choice.chosen
        if choice is not None and choice.chosen.kind == plan.budget.strategy
        else strategy_for(plan, sens, target)
    )
    alpha = 1 - plan.budget.confidence
    measurements = _measurements(plan, strategy, alpha)
    return Allocation(
        accounting=strategy.accounting,
        allocation=plan.budget.allocation,
        confidence=plan.budget.confidence,
        total=_guarantee(strategy, target, measurements),
        tables=_published(plan, strategy, measurements, alpha),
        measurements=measurements,
        strategy="auto",
        advice=advice,
        accountant_choice=choice,
    )
