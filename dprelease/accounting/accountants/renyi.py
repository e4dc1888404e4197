"""`renyi`: Rényi differential privacy over a grid of orders α, converted to (ε, δ) once.

Every measurement has a Rényi curve ε(α) (Mironov 2017): the discrete Gaussian of the count
tables αρ with ρ = Δ²/(2σ²) (Canonne, Kamath & Steinke 2020), as under zCDP; an ε-DP
statistic (a Laplace sum, an exponential-mechanism quantile) the smaller of ε and its zCDP
curve, αε²/2 (αε²/8 for a bounded-range mechanism, Cesar & Rogers 2021), since a Rényi
divergence never exceeds the max-divergence. Curves add up order by order, and the total is
converted at the best order of the grid by the bound of Canonne, Kamath & Steinke (2020,
Prop. 12; Asoodeh et al. 2021): ε = ε(α) + ln((α−1)/α) − (ln δ + ln α)/(α − 1).

The noise is the zCDP accountant's, drawn from shares that add up in ρ, so the stated ε is
never above zCDP's for the same shares (its bound is one of the candidates) and is tighter
where a release holds ε-DP statistics, whose zCDP cost αε²/2 exceeds ε at the large orders a
small δ asks for. What it saves is spent (`spare_scale`): the allocator grows every share
until the grid's bound reaches the plan's ε, so such a release has less noise than under zCDP
at the same (ε, δ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import ReleaseParts, Target
from dprelease.accounting.accountants.zcdp import Zcdp, ZcdpTarget
from dprelease.accounting.composition import (
    Guarantee,
    cks_estimate_at,
    round_down,
    round_up,
    zcdp_epsilon_at_order,
)

if TYPE_CHECKING:
    from dprelease.accounting.accountants.base import Accountant
    from dprelease.plan.model import Budget

MAX_SPARE_SCALE = 1024  # far above any saving: ε-DP statistics' curves cap theirs at ε

ORDERS = tuple(1 + 10 ** (k / 20) for k in range(-60, 81))
"""The grid of Rényi orders α: 1.001 to 10,001, twenty a decade (log-spaced above 1)."""


@dataclass(frozen=True)
class RenyiTarget(ZcdpTarget):
    @property
    def accountant(self) -> Accountant:
        return RENYI


class Renyi(Zcdp):
    name = "renyi"
    label = "Rényi DP (Gaussian noise; α grid, tighter with ε-DP statistics)"
    description = "Rényi DP over a grid of orders, converted to (ε, δ) once"

    def target(self, budget: Budget) -> RenyiTarget:
        found = super().target(budget)
        return RenyiTarget(found.rho, found.delta, found.epsilon, found.cks_order)

    def pure_fields(self, amount: float, epsilon: Fraction) -> dict[str, float]:
        """A pure statistic's cost keeps its ε beside its ρ: its curve is min(ε, αρ)."""
        return {"rho": amount, "epsilon": round_up(epsilon)}

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return replace(super().compose(target, shares, deltas), composition="renyi")

    def required(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return replace(super().required(target, shares, deltas), composition="renyi")

    def release_guarantee(self, parts: ReleaseParts) -> Guarantee:
        """zCDP's guarantee, or the grid's where the statistics' ε-DP curves make it tighter."""
        zcdp = super().release_guarantee(parts)
        curves = _curves(parts)
        if curves is None or parts.delta_left is None:
            return replace(zcdp, composition="renyi")
        found = renyi_epsilon(curves, round_down(parts.delta_left))
        best = zcdp.epsilon if found is None else min(found, zcdp.epsilon)
        return Guarantee(best, zcdp.delta, zcdp.rho, "renyi")

    def spare_scale(self, parts: ReleaseParts, budget: Budget) -> Fraction:
        """What the grid saves, spent (issue 36.1): the largest factor s, bisected to 1/2²⁰,
        such that the release with every ρ times s (an ε-DP statistic's ε, √ρ-proportional,
        times √s) still composes within the plan's ε. 1 when the budget is a ρ (a cap in ρ
        is spent whole already) or nothing is ε-DP. The allocator recomposes the grown
        release exactly before keeping it."""
        curves = _curves(parts)
        if curves is None or budget.rho is not None or budget.epsilon is None:
            return Fraction(1)
        if parts.delta_left is None:
            return Fraction(1)
        log_inv_delta, cap = math.log(1 / round_down(parts.delta_left)), budget.epsilon
        pure = [(float(e), float(r)) for e, r in curves if e is not None]
        rho_only = float(sum((r for e, r in curves if e is None), Fraction(0)))

        def fits(scale: Fraction) -> bool:  # in floats: the allocator's exact check follows
            s = float(scale)
            root = math.sqrt(s)
            return any(
                cks_estimate_at(
                    alpha,
                    rho_only * s + sum(min(e * root / alpha, r * s) for e, r in pure),
                    log_inv_delta,
                )
                <= cap
                for alpha in ORDERS
            )

        low, high = Fraction(1), Fraction(2)
        while fits(high) and high < MAX_SPARE_SCALE:
            low, high = high, high * 2
        while high - low > Fraction(1, 2**20):
            middle = (low + high) / 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        return low


Curve = tuple[Fraction | None, Fraction]
"""One measurement's Rényi curve: (its pure ε, or None; its ρ): ε(α) = min(ε, αρ)."""


def renyi_epsilon(curves: Sequence[Curve], delta: float) -> float | None:
    """The (ε, δ) guarantee of measurements with these curves, composed order by order and
    converted at the best order of ORDERS (rounded up; None when no order gives ε > 0)."""
    best: float | None = None
    for alpha in ORDERS:
        order = Fraction(alpha)
        # ε(α)/α of the whole release: Σ min(ε/α, ρ) (ρ alone where there is no pure ε)
        per_order = sum((r if e is None else min(e / order, r) for e, r in curves), Fraction(0))
        if per_order <= 0:
            continue
        candidate = zcdp_epsilon_at_order(round_up(per_order), delta, alpha)
        if candidate > 0 and (best is None or candidate < best):
            best = candidate
    return best


def _curves(parts: ReleaseParts) -> list[Curve] | None:
    """Every measurement's curve, or None when no statistic is ε-DP (then zCDP's bound is the
    grid's too)."""
    statistics = parts.statistics
    # ε-DP statistics (no δ of their own): their ε beside their ρ
    pure = [(Fraction(e or 0.0), Fraction(r or 0.0)) for e, d, r in statistics if _pure(e, d)]
    if not pure:
        return None
    curves: list[Curve] = [(e, r) for e, r in pure]
    curves += [(None, Fraction(r or 0.0)) for e, d, r in statistics if not _pure(e, d)]
    curves += [(None, Fraction(r)) for r in parts.count_rhos]
    return curves


def _pure(epsilon: float | None, delta: float | None) -> bool:
    """A statistic's cost that is ε-DP outright: an ε and no δ (a discovery's δ is not)."""
    return epsilon is not None and not delta


RENYI = Renyi()
