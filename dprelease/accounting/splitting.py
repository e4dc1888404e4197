"""Numerical solvers behind allocation: how to split a budget to minimise weighted variance.

Each returns the *shape* of a split (shares that sum to the budget given); `allocation` then
rounds it conservatively and checks the total with exact arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from dprelease.accounting.bisection import threshold
from dprelease.accounting.mechanisms import gaussian_sigma


def optimal_laplace_split(weights: Sequence[float], l1: int, total: float) -> list[float]:
    """ε_i minimising Σ w_i Var_DL(Δ₁/ε_i) subject to Σ ε_i = total (exact DL variance).

    With u = ε/Δ₁ the variance is 1/(2 sinh²(u/2)) and its slope −cosh(u/2)/(2 sinh³(u/2)).
    The optimum equalises w_i × slope (Lagrange): an outer bisection on the multiplier and an
    inner, vectorised Newton solve for each u_i. For large scales this is ε_i ∝ w_i^{1/3}.
    """
    log_w = np.log(np.asarray(weights, dtype=np.float64))
    budget_u = total / l1

    def log_slope(u: np.ndarray) -> np.ndarray:
        # log(cosh h) − log 2 − 3 log(sinh h), h = u/2, written to neither overflow nor cancel.
        h = u / 2
        log_cosh = h + np.log1p(np.exp(-2 * h)) - math.log(2)
        log_sinh = h + np.log(-np.expm1(-2 * h)) - math.log(2)
        return log_cosh - math.log(2) - 3 * log_sinh

    def u_for(log_multiplier: float) -> np.ndarray:
        # Solve log w + log slope(u) = log multiplier in log u; slope ≈ 4/u³ starts it.
        log_u = (math.log(4) + log_w - log_multiplier) / 3
        for _ in range(100):
            u = np.exp(log_u)
            value = log_w + log_slope(u) - log_multiplier
            # d/d(log u) of log slope(u) = u·(tanh(u/2)/2 − 3/(2 tanh(u/2))) < 0
            t = np.tanh(u / 2)
            step = value / (u * (t / 2 - 1.5 / t))
            log_u = log_u - np.clip(step, -2, 2)
            if np.max(np.abs(step)) < 1e-14:
                break
        return np.exp(log_u)

    low, high = -700.0, 700.0  # log of the multiplier
    for _ in range(200):
        middle = (low + high) / 2
        if u_for(middle).sum() > budget_u:
            low = middle
        else:
            high = middle
        if high - low < 1e-13:
            break
    u = u_for(high)
    return [float(x) for x in u / u.sum() * total]


def power_split(weights: Sequence[float], power: float, total: float) -> list[float]:
    """Shares ∝ w_i^power summing to total (power 1: weighted; 1/2: zCDP optimum)."""
    raised = [w**power for w in weights]
    scale = total / math.fsum(raised)
    return [r * scale for r in raised]


def _gaussian_variance_slope(epsilon: float, delta: float, l2: float) -> tuple[float, float]:
    """σ and −dσ²/dε of the analytically calibrated Gaussian at (ε, δ).

    Implicit differentiation of δ(σ, ε) = δ gives dσ/dε = −σ² R(B) / Δ, where
    B = −Δ/2σ − εσ/Δ and R(B) = Φ(B)/φ(B) is Mills' ratio (computed stably).
    """
    sigma = gaussian_sigma(epsilon, delta, l2)
    x = l2 / (2 * sigma) + epsilon * sigma / l2  # = −B > 0
    if x < 30:
        mills = 0.5 * math.erfc(x / math.sqrt(2)) / (math.exp(-x * x / 2) / math.sqrt(2 * math.pi))
    else:
        mills = (1 - 1 / x**2 + 3 / x**4) / x
    return sigma, 2 * sigma * sigma**2 * mills / l2


def optimal_gaussian_split(
    weights: Sequence[float], deltas: Sequence[float], l2: float, total: float
) -> list[float]:
    """ε_i minimising Σ w_i σ_i(ε_i, δ_i)² subject to Σ ε_i = total (δ_i fixed).

    Fixed-point iteration on the Lagrange condition w_i × (−dσ²/dε_i) = const, starting from
    the ε_i ∝ w_i^{1/3} optimum of the classical σ ∝ 1/ε calibration.
    """
    epsilons = power_split(weights, 1 / 3, total)
    for _ in range(12):
        ratios = [
            w * _gaussian_variance_slope(e, d, l2)[1]
            for w, e, d in zip(weights, epsilons, deltas, strict=True)
        ]
        mean = math.fsum(ratios) / len(ratios)
        updated = [e * (r / mean) ** (1 / 3) for e, r in zip(epsilons, ratios, strict=True)]
        updated = [u * total / math.fsum(updated) for u in updated]
        change = max(abs(u - e) / e for u, e in zip(updated, epsilons, strict=True))
        epsilons = updated
        if change < 1e-9:
            break
    return epsilons


def largest_scale(fits: Callable[[float], bool], start: float = 1.0) -> float:
    """The largest c > 0 with fits(c) true, for a predicate true below some point.

    Used to scale a shape until a non-additive accountant (advanced composition) is full.
    """
    low, _ = threshold(lambda c: not fits(c), 0.0, start, limit=1e300)
    return low


def smallest_share(meets: Callable[[float], bool], guess: float) -> float:
    """The smallest budget share x > 0 with meets(x) true (inf if none up to 1e6)."""
    return threshold(meets, 0.0, guess, limit=1e6)[1]
