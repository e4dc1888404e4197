"""The plan's total budget as one value type per privacy definition (no optional fields).

A plan's `budget:` has optional ε, δ and ρ because which of them apply depends on the
accountant. Once the accountant is known (`resolve_accounting` settles `auto`), `target_of`
turns the budget into exactly one of these types, so the allocators match on the type instead
of asserting that a field is set:

- `PureTarget(ε)`: ε-DP, discrete Laplace, shares in ε add up;
- `ApproxTarget(ε, δ)`: (ε, δ)-DP with Gaussian noise;
- `AdvancedTarget(ε, δ)`: discrete Laplace under the advanced composition theorem;
- `ZcdpTarget(ρ, δ)`: ρ-zCDP, reported as (ε, δ) by the CKS bound; ρ comes from the plan or
  from its ε at δ (`cks_order` is the Rényi order behind that conversion).
"""

from __future__ import annotations

from dataclasses import dataclass

from dprelease.accounting.composition import epsilon_to_zcdp
from dprelease.errors import BudgetError
from dprelease.plan.model import Budget, ConcreteAccounting, Plan


@dataclass(frozen=True)
class PureTarget:
    epsilon: float


@dataclass(frozen=True)
class ApproxTarget:
    epsilon: float
    delta: float


@dataclass(frozen=True)
class AdvancedTarget:
    epsilon: float
    delta: float


@dataclass(frozen=True)
class ZcdpTarget:
    rho: float
    delta: float
    epsilon: float | None = None  # the plan's ε target, when ρ was derived from it
    cks_order: float | None = None


Target = PureTarget | ApproxTarget | AdvancedTarget | ZcdpTarget


def forced_accounting(plan: Plan) -> ConcreteAccounting | None:
    """The accountant the plan's own settings leave no choice about, under `auto`.

    ρ (total or a table's lock) needs zcdp; a table's δ lock needs approx; without δ only pure
    is possible. None: the strategy's expected error decides."""
    budget = plan.budget
    if budget.accounting != "auto":
        return budget.accounting
    if budget.rho is not None or any(s.rho is not None for s in plan.tables):
        return "zcdp"
    if any(s.delta is not None for s in plan.tables):
        return "approx"
    if budget.delta is None:
        return "pure"
    return None


def settled(budget: Budget) -> ConcreteAccounting:
    """The budget's accountant once `auto` has been settled (`allocation.allocate` does)."""
    if budget.accounting == "auto":
        raise BudgetError("accounting: auto must be settled before the budget is split.")
    return budget.accounting


def target_of(budget: Budget, accounting: ConcreteAccounting) -> Target:
    """The budget as the value type of `accounting` (which must not be `auto`)."""
    if accounting == "zcdp":
        if budget.rho is not None:
            return ZcdpTarget(rho=budget.rho, delta=_delta(budget, accounting))
        rho, order = epsilon_to_zcdp(_epsilon(budget, accounting), _delta(budget, accounting))
        return ZcdpTarget(
            rho=rho, delta=_delta(budget, accounting), epsilon=budget.epsilon, cks_order=order
        )
    epsilon = _epsilon(budget, accounting)
    if accounting == "pure":
        return PureTarget(epsilon)
    if accounting == "approx":
        return ApproxTarget(epsilon, _delta(budget, accounting))
    if accounting == "advanced":
        return AdvancedTarget(epsilon, _delta(budget, accounting))
    raise BudgetError(f"Unknown accounting {accounting!r}.")


def _epsilon(budget: Budget, accounting: str) -> float:
    if budget.epsilon is None:
        raise BudgetError(f"{accounting} accounting needs budget.epsilon.")
    return budget.epsilon


def _delta(budget: Budget, accounting: str) -> float:
    if budget.delta is None:
        raise BudgetError(
            f"budget.delta is required with {accounting} accounting (e.g. delta: 1.0e-10)."
        )
    return budget.delta
