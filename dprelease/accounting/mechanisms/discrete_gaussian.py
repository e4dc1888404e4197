"""The discrete Gaussian mechanism: ρ-zCDP (Canonne, Kamath & Steinke 2020), for zcdp.

| scale | privacy map | variance | accuracy |
|---|---|---|---|
| σ | ρ = Δ₂² / (2σ²) | Σ x² e^{−x²/2σ²} / Σ e^{−x²/2σ²} | smallest integer a, P(|X| ≥ a) ≤ α |
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.accounting.composition import round_up
from dprelease.accounting.mechanisms.base import Mechanism, gaussian_rho, scale_up_until, whole_l2
from dprelease.accounting.mechanisms.discrete_laplace import preview_discrete_laplace
from dprelease.errors import BudgetError, quote
from dprelease.plan.table_spec import Sensitivity


def discrete_gaussian_rho(sigma: float, l2_squared: int) -> Fraction:
    """ρ = Δ₂² / (2σ²), exactly."""
    return Fraction(l2_squared) / (2 * Fraction(sigma) ** 2)


def discrete_gaussian_sigma(rho: float, l2_squared: int) -> float:
    """Smallest float σ with Δ₂² / (2σ²) ≤ ρ exactly."""
    if not rho > 0:
        raise BudgetError(f"A table's rho must be greater than 0, got {quote(rho)}.")
    guess = math.sqrt(l2_squared / (2 * rho))
    return scale_up_until(guess, lambda s: discrete_gaussian_rho(s, l2_squared) <= Fraction(rho))


_DIRECT_SUM_LIMIT = 8.0  # above this σ, sums over the pmf use Euler–Maclaurin instead


def _dg_weight(x: float, sigma: float) -> float:
    return math.exp(-x * x / (2 * sigma * sigma))


def _dg_tail_sum(a: int, sigma: float) -> float:
    """Σ_{x ≥ a} exp(−x²/2σ²) for an integer a ≥ 0."""
    if sigma <= _DIRECT_SUM_LIMIT:
        top = int(a + 40 * sigma + 2)
        return math.fsum(_dg_weight(x, sigma) for x in range(a, top))
    # Euler–Maclaurin: ∫_a^∞ f + f(a)/2 − f′(a)/12 + f‴(a)/720; the rest is negligible.
    integral = sigma * math.sqrt(math.pi / 2) * math.erfc(a / (sigma * math.sqrt(2)))
    weight = _dg_weight(a, sigma)
    first = -a / sigma**2 * weight
    third = (3 * a / sigma**4 - a**3 / sigma**6) * weight
    return integral + weight / 2 - first / 12 + third / 720


def discrete_gaussian_tail(a: int, sigma: float) -> float:
    """P(|X| ≥ a) for the discrete Gaussian with parameter σ and integer a ≥ 0."""
    if a <= 0:
        return 1.0
    normaliser = 1 + 2 * _dg_tail_sum(1, sigma)
    return min(1.0, 2 * _dg_tail_sum(a, sigma) / normaliser)


def discrete_gaussian_variance(sigma: float) -> float:
    """Σ x² e^{−x²/2σ²} / Σ e^{−x²/2σ²}: slightly below σ² for small σ, σ² beyond σ ≈ 3."""
    if sigma >= 3:
        return sigma * sigma
    top = int(40 * sigma + 2)
    weights = [_dg_weight(x, sigma) for x in range(1, top)]
    second_moment = math.fsum(2 * x * x * w for x, w in zip(range(1, top), weights, strict=True))
    return second_moment / (1 + 2 * math.fsum(weights))


def discrete_gaussian_moe(sigma: float, alpha: float) -> float:
    """Smallest integer a with P(|X| ≥ a) ≤ α (the definition OpenDP's accuracy uses)."""
    low, high = 0, int(sigma * (math.sqrt(2 * math.log(2 / alpha)) + 2)) + 2
    while discrete_gaussian_tail(high, sigma) > alpha:
        low, high = high, 2 * high
    while high - low > 1:  # invariant: tail(low) > α ≥ tail(high)
        middle = (low + high) // 2
        if discrete_gaussian_tail(middle, sigma) > alpha:
            low = middle
        else:
            high = middle
    return float(high)


def preview_discrete_gaussian(rng: np.random.Generator, sigma: float, size: int) -> np.ndarray:
    """Rejection from a discrete Laplace (Canonne, Kamath & Steinke 2020, Algorithm 3).
    PREVIEW only (numpy)."""
    t = math.floor(sigma) + 1
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        want = max(64, int((size - filled) * 1.6))
        candidates = preview_discrete_laplace(rng, float(t), want)
        keep = np.exp(-((np.abs(candidates) - sigma**2 / t) ** 2) / (2 * sigma**2))
        accepted = candidates[rng.random(want) < keep][: size - filled]
        out[filled : filled + accepted.size] = accepted
        filled += accepted.size
    return out


class DiscreteGaussian(Mechanism):
    name = "discrete_gaussian"
    label = "discrete Gaussian"
    integer = True

    def variance(self, scale: float) -> float:
        return discrete_gaussian_variance(scale)

    def moe(self, scale: float, alpha: float) -> float:
        return discrete_gaussian_moe(scale, alpha)

    def pure_epsilon(self, scale: float, sens: Sensitivity) -> None:
        return None  # Gaussian noise has no pure ε

    def zcdp_rho(self, scale: float, sens: Sensitivity) -> float:
        return round_up(gaussian_rho(scale, sens))

    def measurement(self, dp: Any, scale: float) -> Any:
        domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
        return dp.m.make_gaussian(domain, dp.l2_distance(T=dp.i64), scale=scale)

    def exact_sampler(self, samplers: Any, scale: float, cells: int) -> Any:
        return samplers.discrete_gaussian(scale, cells)

    def opendp_map_check(self, scale: float, sens: Sensitivity) -> tuple[int, float] | None:
        l2 = whole_l2(sens)
        return None if l2 is None else (l2, sens.l2_squared / (2 * scale**2))

    def preview(self, rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
        return preview_discrete_gaussian(rng, scale, size)


DISCRETE_GAUSSIAN = DiscreteGaussian()
