"""`zcdp`: ρ-zero-concentrated DP, discrete Gaussian noise; ρ adds up exactly and the total
is converted to (ε, δ) once by the Canonne–Kamath–Steinke bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import Accountant, ReleaseParts, Target
from dprelease.accounting.accountants.pure import delta_of, epsilon_of
from dprelease.accounting.composition import (
    Guarantee,
    check_within,
    epsilon_to_zcdp,
    exact_sum,
    pure_to_zcdp,
    round_down,
    round_up,
    zcdp_guarantee,
    zcdp_to_epsilon,
)
from dprelease.accounting.mechanisms import (
    DISCRETE_GAUSSIAN,
    Noise,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
)
from dprelease.accounting.shares import fit_exactly
from dprelease.accounting.splitting import power_split, smallest_share
from dprelease.errors import BudgetError

if TYPE_CHECKING:
    from dprelease.plan.model import Budget
    from dprelease.plan.table_spec import Sensitivity


@dataclass(frozen=True)
class ZcdpTarget(Target):
    rho: float
    delta: float
    epsilon: float | None = None  # the plan's ε target, when ρ was derived from it
    cks_order: float | None = None  # the Rényi order behind that conversion

    @property
    def accountant(self) -> Accountant:
        return ZCDP

    @property
    def amount(self) -> float:
        return self.rho

    def rho_total(self) -> float:
        return self.rho

    def as_epsilon(self) -> float:
        return self.epsilon or zcdp_to_epsilon(self.rho, self.delta)[0]


class Zcdp(Accountant):
    name = "zcdp"
    label = "zCDP (Gaussian noise; tightest for many tables)"
    description = "zero-concentrated DP (ρ), converted to (ε, δ) once"
    unit = "rho"
    needs_delta = True
    mechanism = DISCRETE_GAUSSIAN
    chooses_strategy = True
    hosts_discovery = True  # a discovery's (ε, δ) converts to ρ beside the counts' ρ

    def target(self, budget: Budget) -> ZcdpTarget:
        delta = delta_of(budget, self.name)
        if budget.rho is not None:
            return ZcdpTarget(rho=budget.rho, delta=delta)
        rho, order = epsilon_to_zcdp(epsilon_of(budget, self.name), delta)
        return ZcdpTarget(rho=rho, delta=delta, epsilon=budget.epsilon, cks_order=order)

    def _counts_budget(self, budget: Budget, amount: float, delta: float | None) -> Budget:
        return replace(budget, epsilon=None, rho=amount, delta=delta)

    def statistics_total(
        self, budget: Budget, delta: Fraction | None
    ) -> tuple[Fraction, float | None]:
        if budget.rho is not None:
            return Fraction(budget.rho), None
        if budget.epsilon is None:
            raise BudgetError("budget.epsilon is required (or budget.rho under zcdp).")
        if delta is None:
            raise BudgetError("zcdp accounting needs budget.delta (e.g. delta: 1.0e-10).")
        rho, alpha = epsilon_to_zcdp(budget.epsilon, round_down(delta))
        return Fraction(rho), alpha

    def of_epsilon(self, epsilon: Fraction, bounded_range: bool = False) -> Fraction:
        """ε-DP is ε²/2-zCDP; a bounded-range mechanism (the exponential) ε²/8."""
        return epsilon**2 / (8 if bounded_range else 2)

    def pure_epsilon(self, amount: float, bounded_range: bool = False) -> float:
        """The largest ε with ε²/2 ≤ ρ (ε²/8 for a bounded-range mechanism), exactly."""
        epsilon = math.sqrt((8 if bounded_range else 2) * amount)
        while self.of_epsilon(Fraction(epsilon), bounded_range) > Fraction(amount):
            epsilon = math.nextafter(epsilon, 0.0)
        return epsilon

    def lock(self, epsilon: float) -> float:
        return pure_to_zcdp(epsilon)

    def target_share(self, goal: float, alpha: float, sens: Sensitivity, delta: float) -> float:
        def meets(rho: float) -> bool:
            sigma = discrete_gaussian_sigma(rho, sens.l2_squared)
            return Noise(DISCRETE_GAUSSIAN.name, sigma).moe(alpha) <= goal

        return smallest_share(meets, 0.01)

    def optimal_split(
        self, weights: Sequence[float], deltas: Sequence[float], sens: Sensitivity, room: float
    ) -> list[float]:
        return power_split(weights, 0.5, room)

    def table_noise(self, share: float, sens: Sensitivity) -> Noise:
        noise = Noise(DISCRETE_GAUSSIAN.name, discrete_gaussian_sigma(share, sens.l2_squared))
        check_within(discrete_gaussian_rho(noise.scale, sens.l2_squared), Fraction(share), "rho")
        return noise

    def measured(
        self,
        target: Target,
        noises: Sequence[Noise],
        sens: Sensitivity,
        shares: Sequence[float | None],
    ) -> Guarantee:
        rhos = [float(s) for s in shares if s is not None]
        check_within(exact_sum(rhos), Fraction(target.amount), "rho")
        return self.compose(target, rhos, ())

    def strategy_noises(
        self,
        shape: Sequence[float],
        sens: Sensitivity,
        epsilon: float,
        delta: float | None,
        rho: float | None,
    ) -> tuple[list[float], list[Noise], float | None]:
        if rho is None:
            rho, _ = epsilon_to_zcdp(epsilon, _needed(delta))
        shares = fit_exactly([rho * q for q in shape], range(len(shape)), Fraction(rho))
        noises = [
            Noise(DISCRETE_GAUSSIAN.name, discrete_gaussian_sigma(s, sens.l2_squared))
            for s in shares
        ]
        spent = sum(
            (Fraction(sens.l2_squared) / (2 * Fraction(n.scale) ** 2) for n in noises), Fraction(0)
        )
        check_within(spent, Fraction(rho), "rho")
        return shares, noises, rho

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        order = target.cks_order if isinstance(target, ZcdpTarget) else None
        return zcdp_guarantee(shares, _delta(target), order)

    def required(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return zcdp_guarantee(shares, _delta(target))

    def release_guarantee(self, parts: ReleaseParts) -> Guarantee:
        """ρ adds up over statistics and tables; converted once at the δ the discoveries
        leave, and their δ's added to it."""
        if parts.delta_left is None:
            raise BudgetError(f"{self.name} accounting needs budget.delta (e.g. delta: 1.0e-10).")
        rhos = [r or 0.0 for _, _, r in parts.statistics] + list(parts.count_rhos)
        conversion = round_down(parts.delta_left)
        zcdp = zcdp_guarantee(rhos, conversion, parts.order)
        spent = exact_sum(d or 0.0 for _, d, _ in parts.statistics)
        delta = round_up(Fraction(conversion) + spent)
        return Guarantee(zcdp.epsilon, delta, zcdp.rho, "zcdp")

    def checked(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        check_within(exact_sum(shares), Fraction(target.amount), "rho")
        return super().checked(target, shares, deltas)


def _needed(delta: float | None) -> float:
    if delta is None:
        raise BudgetError("zcdp accounting needs delta.")
    return delta


def _delta(target: Target) -> float:
    if target.delta is None:  # ZcdpTarget always has one; for the type checker
        raise BudgetError("zcdp accounting needs budget.delta (e.g. delta: 1.0e-10).")
    return target.delta


ZCDP = Zcdp()
