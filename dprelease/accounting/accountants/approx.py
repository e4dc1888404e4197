"""`approx`: (ε, δ)-DP with Gaussian noise; the release's discrete Gaussians are composed
exactly as one Gaussian mechanism and certified by their PLD (`gaussian_set`, `dgauss_pld`),
never as a sum of per-table (ε, δ)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import Accountant, Fields, Target
from dprelease.accounting.accountants.pure import delta_of, epsilon_of
from dprelease.accounting.composition import Guarantee, basic_composition, check_within
from dprelease.accounting.mechanisms import (
    DISCRETE_GAUSSIAN,
    GAUSSIAN,
    Noise,
    discrete_gaussian_sigma,
    gaussian_moe,
    gaussian_sigma,
)
from dprelease.accounting.mechanisms.gaussian import l2_upper
from dprelease.accounting.shares import fit_exactly
from dprelease.accounting.splitting import optimal_gaussian_split, smallest_share
from dprelease.errors import BudgetError, InternalError

if TYPE_CHECKING:
    from dprelease.plan.model import Budget
    from dprelease.plan.table_spec import Sensitivity


@dataclass(frozen=True)
class ApproxTarget(Target):
    epsilon: float
    delta: float

    @property
    def accountant(self) -> Accountant:
        return APPROX

    @property
    def amount(self) -> float:
        return self.epsilon


class Approx(Accountant):
    name = "approx"
    label = "approximate (ε, δ) (Gaussian noise, composed exactly)"
    description = "(ε, δ)-DP, Gaussian noise"
    unit = "epsilon"
    needs_delta = True
    splits_delta = True
    mechanism = DISCRETE_GAUSSIAN  # integer noise; the set certified by its PLD (dgauss_pld)
    slow_first_certificate = True  # the PLD's import and first composition: seconds
    chooses_strategy = True
    priced_as_set = True

    def target(self, budget: Budget) -> ApproxTarget:
        return ApproxTarget(epsilon_of(budget, self.name), delta_of(budget, self.name))

    def statistic_noise(self, amount: float, delta: float | None, sens: Sensitivity) -> Noise:
        """The (ε, δ) Gaussian; a statistic's δ share must be positive."""
        if not delta:
            raise InternalError("a Gaussian statistic needs a delta share > 0")
        return Noise(GAUSSIAN.name, gaussian_sigma(amount, delta, l2_upper(sens)))

    def target_share(self, goal: float, alpha: float, sens: Sensitivity, delta: float) -> float:
        sigma_needed = goal / gaussian_moe(1.0, alpha)
        return smallest_share(lambda eps: gaussian_sigma(eps, delta, sens.l2) <= sigma_needed, 0.1)

    def optimal_split(
        self, weights: Sequence[float], deltas: Sequence[float], sens: Sensitivity, room: float
    ) -> list[float]:
        return optimal_gaussian_split(weights, deltas, sens.l2, room)

    def fields(self, share: float, delta: float | None = None) -> Fields:
        """A measurement of the Gaussian set has no (ε, δ) of its own: the set is one."""
        return (None, None, None)

    def measured(
        self,
        target: Target,
        noises: Sequence[Noise],
        sens: Sensitivity,
        shares: Sequence[float | None],
    ) -> Guarantee:
        from dprelease.accounting.dgauss_pld import certify

        epsilon, delta = target.epsilon_delta()
        sigmas = [n.scale for n in noises]
        found = certify(sigmas, sens, epsilon, delta)
        if found.sigmas != tuple(sigmas):  # the strategy's σ's were certified already
            raise InternalError("approx measurements drawn with uncertified noise")
        return Guarantee(epsilon=found.epsilon, delta=delta, composition=found.method)

    def strategy_noises(
        self,
        shape: Sequence[float],
        sens: Sensitivity,
        epsilon: float,
        delta: float | None,
        rho: float | None,
    ) -> tuple[list[float], list[Noise], float | None]:
        """Σ Δ₂²/σ_A² ≤ 1/σ*²: the set is one Gaussian (certified later, `approx_noise`)."""
        if delta is None:
            raise BudgetError("approx accounting needs delta.")
        room = 1 / Fraction(gaussian_sigma(epsilon, delta, 1.0)) ** 2
        shares = fit_exactly([float(room) * q for q in shape], range(len(shape)), room)
        noises = [
            Noise(GAUSSIAN.name, discrete_gaussian_sigma(s / 2, sens.l2_squared)) for s in shares
        ]
        spent = sum(
            (Fraction(sens.l2_squared) / Fraction(n.scale) ** 2 for n in noises), Fraction(0)
        )
        check_within(spent, room, "gaussian sensitivity")
        return shares, noises, None

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return basic_composition(shares, deltas)


APPROX = Approx()
