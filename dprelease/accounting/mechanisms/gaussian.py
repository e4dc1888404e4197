"""The Gaussian mechanism, calibrated exactly (analytic Gaussian): (ε, δ)-DP for approx.

| scale | privacy map | variance | accuracy |
|---|---|---|---|
| σ | δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) (Balle & Wang 2018) | σ² | σ·Φ⁻¹(1 − α/2) |
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np

from dprelease.accounting.bisection import threshold
from dprelease.accounting.composition import round_up
from dprelease.accounting.mechanisms.base import Mechanism, gaussian_rho, raise_until, whole_l2
from dprelease.accounting.precise import gaussian_delta_upper
from dprelease.errors import BudgetError, quote
from dprelease.plan.table_spec import Sensitivity

_STANDARD_NORMAL = NormalDist()


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_delta(sigma: float, epsilon: float, l2: float) -> float:
    """δ(ε) of the Gaussian mechanism, exact (Balle & Wang 2018, Theorem 8), with an upward
    allowance for the rounding error of the subtraction."""
    a = l2 / (2 * sigma) - epsilon * sigma / l2
    b = -l2 / (2 * sigma) - epsilon * sigma / l2
    first = _normal_cdf(a)
    second = math.exp(epsilon) * _normal_cdf(b) if b > -40 else 0.0
    return max(first - second, 0.0) + 8 * math.ulp(first)


def gaussian_sigma(epsilon: float, delta: float, l2: float) -> float:
    """Smallest σ (up to bisection precision, always on the safe side) with δ(σ) ≤ δ.

    Exact for every ε, unlike the √(2 ln(1.25/δ))/ε shortcut, which only holds for ε < 1.
    """
    if not epsilon > 0 or not 0 < delta < 1:
        raise BudgetError(
            "A Gaussian table needs epsilon > 0 and 0 < delta < 1, "
            f"got {quote(epsilon)}, {quote(delta)}."
        )
    sigma = threshold(lambda sigma: gaussian_delta(sigma, epsilon, l2) <= delta, 0.0, l2)[1]
    return raise_until(sigma, lambda s: gaussian_delta_upper(s, epsilon, l2) <= Fraction(delta))


def gaussian_epsilon(sigmas: list[float], delta: float, l2: float) -> float:
    """Exact ε at δ of composing Gaussian mechanisms (the privacy loss distribution).

    k Gaussians compose exactly to one with σ = (Σ σ_i⁻²)^{−1/2}; its ε(δ) is the inverse of
    `gaussian_delta`, found by bisection (upper end kept, so the result is never optimistic).
    """
    # Rounded down a little: a smaller σ only makes the stated ε larger (safe).
    sigma = math.fsum(s**-2 for s in sigmas) ** -0.5 * (1 - 1e-14)
    epsilon = threshold(lambda eps: gaussian_delta(sigma, eps, l2) <= delta, 0.0, 1.0)[1]
    return raise_until(epsilon, lambda e: gaussian_delta_upper(sigma, e, l2) <= Fraction(delta))


def gaussian_moe(sigma: float, alpha: float) -> float:
    """σ·Φ⁻¹(1 − α/2) = σ·√2·erf⁻¹(1 − α)."""
    return sigma * _STANDARD_NORMAL.inv_cdf(1 - alpha / 2)


class Gaussian(Mechanism):
    name = "gaussian"
    label = "Gaussian (analytic calibration)"
    integer = False
    composes_as_gaussian = True

    def variance(self, scale: float) -> float:
        return scale**2

    def moe(self, scale: float, alpha: float) -> float:
        return gaussian_moe(scale, alpha)

    def pure_epsilon(self, scale: float, sens: Sensitivity) -> None:
        return None  # Gaussian noise has no pure ε

    def zcdp_rho(self, scale: float, sens: Sensitivity) -> float:
        return round_up(gaussian_rho(scale, sens))

    def epsilon_at(self, scale: float, sens: Sensitivity, delta: float) -> float:
        """Exact (the analytic Gaussian's own ε(δ)), tighter than through zCDP."""
        return gaussian_epsilon([scale], delta, sens.l2)

    def measurement(self, dp: Any, scale: float) -> Any:
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)

    def opendp_map_check(self, scale: float, sens: Sensitivity) -> tuple[float, float] | None:
        l2 = whole_l2(sens)
        return None if l2 is None else (float(l2), sens.l2_squared / (2 * scale**2))

    def preview(self, rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
        return rng.normal(0.0, scale, size)  # preview only


GAUSSIAN = Gaussian()


def l2_upper(sens: Sensitivity) -> float:
    """√(L2²) rounded up to a float (a float square root may fall just short)."""
    value = math.sqrt(sens.l2_squared)
    while Fraction(value) ** 2 < sens.l2_squared:
        value = math.nextafter(value, math.inf)
    return value
