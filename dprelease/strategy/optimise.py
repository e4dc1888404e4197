"""Choosing how much to measure each candidate marginal: the budget optimisation.

Under zCDP (discrete Gaussian, ρ = Σ Δ₂² p_A / 2) and approx (Gaussian, the whole set one
Gaussian mechanism of sensitivity √(Σ Δ₂² p_A)) the privacy cost is linear in the precisions
p_A = 1/v_A, and the workload error f(p) = Σ_B w_B err_B(p) is convex and homogeneous of
degree −1. So the best *shape* q (Σ q = 1) does not depend on the budget: p = R·q. It is found
by the multiplicative algorithm of optimal design (q_A ← q_A √(−∂f/∂q_A), normalised; monotone
for this A-optimal criterion), then candidates with a negligible share are dropped when that
does not raise the error.

Under pure DP (discrete Laplace, ε_A = Δ₁/b_A, p_A = 2 sinh²(ε_A/2Δ₁)) the cost is linear in
ε: SLSQP over the ε-simplex, started from the continuous-Laplace optimum (p ∝ ε², again
scale-free) and polished with the exact discrete-Laplace variance.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

from dprelease.strategy.residual import ErrorModel

Objective = Callable[[np.ndarray], tuple[float, np.ndarray]]
_DROP = 1e-7  # a share below this fraction of the largest is dropped (if that does not hurt)
# a share below this fraction of the largest is dropped if the shape re-optimised without it
# is within the duality gap: a measurement that buys next to nothing is not worth listing
_PRUNE = 1e-2


def precision_shape(
    model: ErrorModel,
    weights: np.ndarray,
    start: np.ndarray,
    gap: float = 1e-4,
    iterations: int = 5000,
) -> np.ndarray:
    """The precision shape q ≥ 0, Σ q = 1, minimising f(q) (multiplicative updates).

    Only candidates positive in `start` can be chosen; the result is never worse than `start`.
    Stops when the duality gap certifies f(q) ≤ (1 + gap)·min f: by convexity and
    Σ q_A ∂f/∂q_A = −f, min f ≥ 2f − max_A(−∂f/∂q_A) over the candidates in use.
    """
    q: np.ndarray = start / start.sum()
    value, grad = model.objective(q, weights)
    if not math.isfinite(value):
        return q
    best, best_value = q, value
    used = q > 0
    for _ in range(iterations):
        if float(np.max(-grad[used])) - value <= gap * value:
            break
        # KKT: −∂f/∂q_A = f for every used A (homogeneity); the update moves towards it.
        ratio = np.maximum(-grad, 0) / value
        q = q * np.sqrt(ratio)
        q /= q.sum()
        value, grad = model.objective(q, weights)
        if value < best_value:
            best, best_value = q, value
        elif value > best_value * (1 + 1e-12):
            break
    best = _drop_small(model, weights, best, best_value)
    return _prune(model, weights, best, gap, iterations)


def _prune(
    model: ErrorModel, weights: np.ndarray, q: np.ndarray, gap: float, iterations: int
) -> np.ndarray:
    """Drop the tiny shares the multiplicative updates only shrink slowly (a marginal at σ 80×
    the others'), when the shape re-optimised without them is as good within `gap`."""
    small = (q > 0) & (q < _PRUNE * q.max())
    if not small.any():
        return q
    value = model.objective(q, weights)[0]
    trial = precision_shape(model, weights, np.where(small, 0.0, q), gap, iterations)
    trial_value = model.objective(trial, weights)[0]
    return trial if trial_value <= value * (1 + gap) else q


def _drop_small(model: ErrorModel, weights: np.ndarray, q: np.ndarray, value: float) -> np.ndarray:
    small = (q < _DROP * q.max()) & (q > 0)
    if not small.any():
        return q
    trial = np.where(small, 0.0, q)
    trial /= trial.sum()
    trial_value, _ = model.objective(trial, weights)
    return trial if trial_value <= value else q


def dl_precision(epsilon: np.ndarray, l1: float) -> np.ndarray:
    """1 / Var of the discrete Laplace with b = Δ₁/ε: 2 sinh²(ε/2Δ₁)."""
    return 2 * np.sinh(epsilon / (2 * l1)) ** 2


def _pure_objective(
    model: ErrorModel, weights: np.ndarray, l1: float, total: float, exact: bool
) -> Objective:
    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        eps = x * total
        if exact:
            p = dl_precision(eps, l1)
            dp = np.sinh(eps / l1) / l1 * total
        else:  # continuous Laplace: variance 2Δ²/ε²
            p = eps**2 / (2 * l1 * l1)
            dp = eps / (l1 * l1) * total
        value, grad = model.objective(p, weights)
        return value, grad * dp

    return f


def epsilon_shape(
    model: ErrorModel, weights: np.ndarray, l1: float, total: float, start: np.ndarray, exact: bool
) -> np.ndarray:
    """ε shares (Σ = 1) minimising the workload error under pure DP, by SLSQP."""
    objective = _pure_objective(model, weights, l1, total, exact)
    free = start > 0
    x0 = start[free] / start[free].sum()

    def fun(y: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.zeros_like(start)
        x[free] = y
        value, grad = objective(x)
        if not math.isfinite(value):
            return 1e300, np.zeros_like(y)
        return value, grad[free]

    scale = fun(x0)[0]

    def scaled(y: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = fun(y)
        return value / scale, grad / scale

    result = minimize(
        scaled,
        x0,
        jac=True,
        method="SLSQP",
        bounds=[(1e-9, 1.0)] * int(free.sum()),
        constraints=[
            {"type": "eq", "fun": lambda y: y.sum() - 1, "jac": lambda y: np.ones_like(y)}
        ],
        options={"maxiter": 300, "ftol": 1e-12},
    )
    y = np.clip(result.x, 0, None)
    y /= y.sum()
    chosen = y if fun(y)[0] <= fun(x0)[0] else x0
    x = np.zeros_like(start)
    x[free] = chosen
    value = objective(x)[0]
    small = (x < 1e-5 * x.max()) & (x > 0)
    if small.any():
        trial = np.where(small, 0.0, x)
        trial /= trial.sum()
        if objective(trial)[0] <= value:
            return trial
    return x
