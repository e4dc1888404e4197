"""`pure`: ε-DP, discrete Laplace noise, basic composition (ε = Σ ε_i, δ = 0)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import Accountant, Target
from dprelease.accounting.composition import (
    Guarantee,
    basic_composition,
    check_within,
    exact_sum,
    round_up,
)
from dprelease.accounting.mechanisms import DISCRETE_LAPLACE, Noise, laplace_epsilon, laplace_scale
from dprelease.accounting.shares import fit_exactly
from dprelease.accounting.splitting import optimal_laplace_split, smallest_share
from dprelease.errors import BudgetError

if TYPE_CHECKING:
    from dprelease.plan.model import Budget
    from dprelease.plan.table_spec import Sensitivity


@dataclass(frozen=True)
class PureTarget(Target):
    epsilon: float
    delta: None = None

    @property
    def accountant(self) -> Accountant:
        return PURE

    @property
    def amount(self) -> float:
        return self.epsilon


def epsilon_of(budget: Budget, name: str) -> float:
    """The plan's ε, which every ε-denominated accountant needs."""
    if budget.epsilon is None:
        raise BudgetError(f"{name} accounting needs budget.epsilon.")
    return budget.epsilon


def delta_of(budget: Budget, name: str) -> float:
    """The plan's δ, which every (ε, δ) accountant needs."""
    if budget.delta is None:
        raise BudgetError(f"budget.delta is required with {name} accounting (e.g. delta: 1.0e-10).")
    return budget.delta


class LaplaceTables(Accountant):
    """Tables of discrete Laplace noise, one ε share each (pure and advanced)."""

    mechanism = DISCRETE_LAPLACE

    def target_share(self, goal: float, alpha: float, sens: Sensitivity, delta: float) -> float:
        return smallest_share(
            lambda eps: DISCRETE_LAPLACE.moe(laplace_scale(eps, sens.l1), alpha) <= goal, 0.1
        )

    def optimal_split(
        self, weights: Sequence[float], deltas: Sequence[float], sens: Sensitivity, room: float
    ) -> list[float]:
        return optimal_laplace_split(weights, sens.l1, room)

    def table_noise(self, share: float, sens: Sensitivity) -> Noise:
        noise = Noise(DISCRETE_LAPLACE.name, laplace_scale(share, sens.l1))
        check_within(laplace_epsilon(noise.scale, sens.l1), Fraction(share), "epsilon")
        return noise


class Pure(LaplaceTables):
    name = "pure"
    label = "pure ε-DP (Laplace noise, δ = 0)"
    description = "pure ε-DP, basic composition"
    unit = "epsilon"
    needs_delta = False
    chooses_strategy = True
    strategy_shape = "laplace"

    def target(self, budget: Budget) -> PureTarget:
        return PureTarget(epsilon_of(budget, self.name))

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return basic_composition(shares)

    def measured(
        self,
        target: Target,
        noises: Sequence[Noise],
        sens: Sensitivity,
        shares: Sequence[float | None],
    ) -> Guarantee:
        spent = exact_sum(float(laplace_epsilon(n.scale, sens.l1)) for n in noises)
        check_within(spent, Fraction(target.amount), "epsilon")
        return Guarantee(epsilon=round_up(spent), delta=None)

    def strategy_noises(
        self,
        shape: Sequence[float],
        sens: Sensitivity,
        epsilon: float,
        delta: float | None,
        rho: float | None,
    ) -> tuple[list[float], list[Noise], float | None]:
        shares = fit_exactly([epsilon * q for q in shape], range(len(shape)), Fraction(epsilon))
        noises = [Noise(DISCRETE_LAPLACE.name, laplace_scale(s, sens.l1)) for s in shares]
        spent = exact_sum([float(laplace_epsilon(n.scale, sens.l1)) for n in noises])
        check_within(spent, Fraction(epsilon), "epsilon")
        return shares, noises, None


PURE = Pure()
