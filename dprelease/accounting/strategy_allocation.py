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

from dprelease.accounting.accountants.base import Target
from dprelease.accounting.accountants.registry import accountant
from dprelease.accounting.allocated import Allocation, TableBudget, equivalent_noise, priced
from dprelease.accounting.auto import AccountantChoice
from dprelease.accounting.composition import Guarantee
from dprelease.accounting.mechanisms import Noise
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.subtables import reduce_key
from dprelease.plan.table_spec import Sensitivity, TableSpec
from dprelease.strategy.select import Strategy, WorkloadTable, select_strategy


def workload_of(plan: Plan) -> tuple[WorkloadTable, ...]:
    return tuple(WorkloadTable(s.name, s.by, s.weight) for s in plan.tables)


def strategy_for(plan: Plan, sens: Sensitivity, target: Target) -> Strategy[Noise]:
    """The strategy of `plan.budget.strategy` under the target's accountant."""
    accountant = target.accountant
    if not accountant.chooses_strategy:
        raise InternalError(f"the strategy has no {accountant.name} accountant")
    from dprelease.accounting.approx_noise import certified_strategy

    rho = target.rho_total()
    strategy = select_strategy(
        plan.schema,
        workload_of(plan),
        sens,
        accountant,
        target.as_epsilon(),
        target.delta,
        plan.budget.strategy,
        rho=rho,
    )
    return certified_strategy(strategy, sens)


def _unique(name: str, taken: set[str]) -> str:
    candidate, k = name, 2
    while candidate in taken:
        candidate, k = f"{name}_{k}", k + 1
    taken.add(candidate)
    return candidate


def _measurements(plan: Plan, strategy: Strategy[Noise], alpha: float) -> tuple[TableBudget, ...]:
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
                budget=accountant(strategy.accounting).fields(m.share),
                measured_as=name,
            )
        )
    return tuple(out)


def _published(
    plan: Plan, strategy: Strategy[Noise], measurements: tuple[TableBudget, ...], alpha: float
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


def _guarantee(target: Target, measurements: tuple[TableBudget, ...]) -> Guarantee:
    """The composed guarantee of the measurements, checked against the target."""
    noises = [m.noise for m in measurements]
    shares = [m.rho if m.rho is not None else m.epsilon for m in measurements]
    return target.accountant.measured(target, noises, measurements[0].sensitivity, shares)


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
        total=_guarantee(target, measurements),
        tables=_published(plan, strategy, measurements, alpha),
        measurements=measurements,
        strategy="auto",
        advice=advice,
        accountant_choice=choice,
    )
