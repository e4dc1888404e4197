"""The discrete Laplace (geometric) mechanism: pure ε-DP, used by pure and advanced accounting.

| scale | privacy map | variance | accuracy |
|---|---|---|---|
| b | ε = Δ₁ / b | 1 / (2 sinh²(1/2b)) | b·ln(2/(α(e^{1/b}+1))) + 1 (OpenDP) |
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.accounting.composition import pure_to_zcdp, round_up, typed_value
from dprelease.accounting.mechanisms.base import Mechanism, scale_up_until
from dprelease.errors import BudgetError, quote
from dprelease.plan.table_spec import Sensitivity


def laplace_epsilon(scale: float, l1: int) -> Fraction:
    """ε = Δ₁ / b, exactly."""
    return Fraction(l1) / Fraction(scale)


def laplace_scale(epsilon: float, l1: int) -> float:
    """Smallest float b with Δ₁ / b ≤ ε exactly, ε read as a float and as the decimal it
    prints as (a typed 0.4 is charged as 2/5, below its float; issue 37.4)."""
    if not epsilon > 0:
        raise BudgetError(f"A table's epsilon must be greater than 0, got {quote(epsilon)}.")
    if not math.isfinite(l1 / epsilon):
        raise BudgetError(
            f"A table's epsilon of {quote(epsilon)} is too small to calibrate noise for; "
            "raise the budget."
        )
    bound = min(Fraction(epsilon), typed_value(epsilon))
    return scale_up_until(l1 / epsilon, lambda b: laplace_epsilon(b, l1) <= bound)


def discrete_laplace_variance(scale: float) -> float:
    """Var = 2e^{−1/b} / (1 − e^{−1/b})² = 1 / (2 sinh²(1/2b))."""
    return 1 / (2 * math.sinh(1 / (2 * scale)) ** 2)


def discrete_laplace_moe(scale: float, alpha: float) -> float:
    """a with P(|X| ≥ a) = α: b·ln(2/(α(e^{1/b}+1))) + 1 (OpenDP's form), computed as
    b·(ln(2/α) − ln(1 + e^{−1/b})) so that small b does not overflow."""
    return scale * (math.log(2 / alpha) - math.log1p(math.exp(-1 / scale)))


def preview_discrete_laplace(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Difference of two geometric variables: P(x) ∝ exp(−|x|/b). PREVIEW only (numpy)."""
    p = -math.expm1(-1 / scale)
    return rng.geometric(p, size) - rng.geometric(p, size)


class DiscreteLaplace(Mechanism):
    name = "discrete_laplace"
    label = "discrete Laplace (geometric)"
    integer = True

    def variance(self, scale: float) -> float:
        return discrete_laplace_variance(scale)

    def moe(self, scale: float, alpha: float) -> float:
        return discrete_laplace_moe(scale, alpha)

    def pure_epsilon(self, scale: float, sens: Sensitivity) -> Fraction:
        return laplace_epsilon(scale, sens.l1)

    def zcdp_rho(self, scale: float, sens: Sensitivity) -> float:
        """ρ = ε²/2 (pure ε-DP implies it; Bun & Steinke 2016), ε rounded up first."""
        return pure_to_zcdp(round_up(laplace_epsilon(scale, sens.l1)))

    def measurement(self, dp: Any, scale: float) -> Any:
        domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
        return dp.m.make_laplace(domain, dp.l1_distance(T=dp.i64), scale=scale)

    def exact_sampler(self, samplers: Any, scale: float, cells: int) -> Any:
        return samplers.discrete_laplace(scale, cells)

    def opendp_map_check(self, scale: float, sens: Sensitivity) -> tuple[int, float]:
        return sens.l1, sens.l1 / scale

    def preview(self, rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
        return preview_discrete_laplace(rng, scale, size)


DISCRETE_LAPLACE = DiscreteLaplace()
