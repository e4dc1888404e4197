"""The noise mechanisms as accounting sees them: privacy map, its inverse, noise std, accuracy.

Small pure functions, one formula each; sampling lives in `dprelease.noise`. Inverses round
the noise scale *up* and are checked with exact arithmetic, so the privacy a scale really buys
never exceeds the budget it was computed from.

| mechanism | scale | privacy map | accounting |
|---|---|---|---|
| discrete Laplace (geometric) | b | ε = Δ₁ / b | pure, advanced |
| Laplace | b | ε = Δ₁ / b | (reference only) |
| Gaussian | σ | analytic (Balle & Wang): δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) | approx |
| discrete Gaussian | σ | ρ = Δ₂² / (2σ²) (Canonne, Kamath & Steinke 2020) | zcdp |
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Literal

from dprelease.accounting.bisection import threshold
from dprelease.accounting.precise import gaussian_delta_upper
from dprelease.errors import BudgetError, InternalError, quote

MechanismName = Literal["discrete_laplace", "laplace", "gaussian", "discrete_gaussian"]
_STANDARD_NORMAL = NormalDist()


def _scale_up_until(scale: float, ok: object) -> float:
    """Nudge a float scale up until the exact check `ok(scale)` holds (a few steps at most)."""
    assert callable(ok)
    for _ in range(64):
        if ok(scale):
            return scale
        scale = math.nextafter(scale, math.inf)
    raise InternalError("could not round a noise scale up to its budget")


# --- discrete Laplace (and Laplace) ----------------------------------------------------------


def laplace_epsilon(scale: float, l1: int) -> Fraction:
    """ε = Δ₁ / b, exactly (the same map for the discrete and the continuous Laplace)."""
    return Fraction(l1) / Fraction(scale)


def laplace_scale(epsilon: float, l1: int) -> float:
    """Smallest float b with Δ₁ / b ≤ ε exactly."""
    if not epsilon > 0:
        raise BudgetError(f"A table's epsilon must be greater than 0, got {quote(epsilon)}.")
    return _scale_up_until(l1 / epsilon, lambda b: laplace_epsilon(b, l1) <= Fraction(epsilon))


def discrete_laplace_variance(scale: float) -> float:
    """Var = 2e^{−1/b} / (1 − e^{−1/b})² = 1 / (2 sinh²(1/2b))."""
    return 1 / (2 * math.sinh(1 / (2 * scale)) ** 2)


def discrete_laplace_moe(scale: float, alpha: float) -> float:
    """a with P(|X| ≥ a) = α: b·ln(2/(α(e^{1/b}+1))) + 1 (OpenDP's form), computed as
    b·(ln(2/α) − ln(1 + e^{−1/b})) so that small b does not overflow."""
    return scale * (math.log(2 / alpha) - math.log1p(math.exp(-1 / scale)))


def laplace_moe(scale: float, alpha: float) -> float:
    """Continuous Laplace: P(|X| ≥ a) = e^{−a/b} = α at a = b·ln(1/α)."""
    return scale * math.log(1 / alpha)


# --- Gaussian (analytic calibration) ----------------------------------------------------------


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
    return _raise_until(sigma, lambda s: gaussian_delta_upper(s, epsilon, l2) <= Fraction(delta))


def _raise_until(value: float, ok: object) -> float:
    """Raise a float found by bisection on a float formula until the high-precision check
    `ok(value)` holds: the float δ can be ~1e-10 off (relative) in the far tails."""
    assert callable(ok)
    step = 2.0**-45
    for _ in range(64):
        if ok(value):
            return value
        value *= 1 + step
        step *= 2
    raise InternalError("could not push a Gaussian bound up to its exact check")


def gaussian_epsilon(sigmas: list[float], delta: float, l2: float) -> float:
    """Exact ε at δ of composing Gaussian mechanisms (the privacy loss distribution).

    k Gaussians compose exactly to one with σ = (Σ σ_i⁻²)^{−1/2}; its ε(δ) is the inverse of
    `gaussian_delta`, found by bisection (upper end kept, so the result is never optimistic).
    """
    # Rounded down a little: a smaller σ only makes the stated ε larger (safe).
    sigma = math.fsum(s**-2 for s in sigmas) ** -0.5 * (1 - 1e-14)
    epsilon = threshold(lambda eps: gaussian_delta(sigma, eps, l2) <= delta, 0.0, 1.0)[1]
    return _raise_until(epsilon, lambda e: gaussian_delta_upper(sigma, e, l2) <= Fraction(delta))


def gaussian_moe(sigma: float, alpha: float) -> float:
    """σ·Φ⁻¹(1 − α/2) = σ·√2·erf⁻¹(1 − α)."""
    return sigma * _STANDARD_NORMAL.inv_cdf(1 - alpha / 2)


# --- discrete Gaussian --------------------------------------------------------------------


def discrete_gaussian_rho(sigma: float, l2_squared: int) -> Fraction:
    """ρ = Δ₂² / (2σ²), exactly."""
    return Fraction(l2_squared) / (2 * Fraction(sigma) ** 2)


def discrete_gaussian_sigma(rho: float, l2_squared: int) -> float:
    """Smallest float σ with Δ₂² / (2σ²) ≤ ρ exactly."""
    if not rho > 0:
        raise BudgetError(f"A table's rho must be greater than 0, got {quote(rho)}.")
    guess = math.sqrt(l2_squared / (2 * rho))
    return _scale_up_until(guess, lambda s: discrete_gaussian_rho(s, l2_squared) <= Fraction(rho))


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


# --- one table's noise --------------------------------------------------------------------


@dataclass(frozen=True)
class Noise:
    """The noise added to every cell of one table: a mechanism and its scale (b or σ)."""

    mechanism: MechanismName
    scale: float

    def __post_init__(self) -> None:
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise InternalError(f"noise scale must be positive and finite, got {quote(self.scale)}")

    @property
    def variance(self) -> float:
        if self.mechanism == "discrete_laplace":
            return discrete_laplace_variance(self.scale)
        if self.mechanism == "laplace":
            return 2 * self.scale**2
        if self.mechanism == "gaussian":
            return self.scale**2
        return discrete_gaussian_variance(self.scale)

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    def moe(self, alpha: float) -> float:
        """Half-width a of the interval that holds with probability 1 − α for one cell."""
        if self.mechanism == "discrete_laplace":
            return discrete_laplace_moe(self.scale, alpha)
        if self.mechanism == "laplace":
            return laplace_moe(self.scale, alpha)
        if self.mechanism == "gaussian":
            return gaussian_moe(self.scale, alpha)
        return discrete_gaussian_moe(self.scale, alpha)

    def moe_table(self, alpha: float, cells: int) -> float:
        """Half-width that holds for all cells of a table at once (union bound: α / cells)."""
        return self.moe(alpha / cells)
