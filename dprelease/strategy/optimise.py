"""Choosing how much to measure each candidate marginal: the budget optimisation.

Under zCDP (discrete Gaussian, ρ = Σ Δ₂² p_A / 2) and approx (Gaussian, the whole set one
Gaussian mechanism of sensitivity √(Σ Δ₂² p_A)) the privacy cost is linear in the precisions
p_A = 1/v_A, and the workload error f(p) = Σ_B w_B err_B(p) is convex and homogeneous of
degree −1. So the best *shape* q (Σ q = 1) does not depend on the budget: p = R·q. It is found
by the multiplicative algorithm of optimal design (q_A ← q_A √(−∂f/∂q_A), normalised; monotone
for this A-optimal criterion), then candidates with a negligible share are dropped when that
does not raise the error.

Under pure DP (discrete Laplace, ε_A = Δ₁/b_A, p_A = 2 sinh²(ε_A/2Δ₁)) the cost is linear in
ε: multiplicative updates over the ε-simplex with exponent 1/3 (x_A ← x_A ∛(−∂f/∂x_A),
normalised; exact in one step where f = Σ a_A/x_A², the continuous Laplace of separate
tables), first for the continuous-Laplace optimum (p ∝ ε², again scale-free), then polished
with the exact discrete-Laplace variance. The pure problem has a local optimum on every face of
the simplex (its cost is concave in the precisions), so the continuous optimum is followed by
a local search that drops measurements one at a time. No scipy: a what-if on ε re-polishes in a
few ms, and SLSQP, used before, stalled far from the optimum from some starts (up to 50× on 50
tables).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dprelease.strategy.cost import Effort
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
    effort: Effort | None = None,
) -> np.ndarray:
    """The precision shape q ≥ 0, Σ q = 1, minimising f(q) (multiplicative updates).

    Only candidates positive in `start` can be chosen; the result is never worse than `start`.
    Stops when the duality gap certifies f(q) ≤ (1 + gap)·min f: by convexity and
    Σ q_A ∂f/∂q_A = −f, min f ≥ 2f − max_A(−∂f/∂q_A) over the candidates in use, or when
    `effort` is used up (the best shape so far).
    """
    effort = effort if effort is not None else Effort()
    q: np.ndarray = start / start.sum()
    value, grad = model.objective(q, weights)
    if not math.isfinite(value):
        return q
    best, best_value = q, value
    used = q > 0
    for _ in range(iterations):
        if float(np.max(-grad[used])) - value <= gap * value or not effort.spend(model.size):
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
    return _prune(model, weights, best, gap, iterations, effort)


def _prune(
    model: ErrorModel,
    weights: np.ndarray,
    q: np.ndarray,
    gap: float,
    iterations: int,
    effort: Effort,
) -> np.ndarray:
    """Drop the tiny shares the multiplicative updates only shrink slowly (a marginal at σ 80×
    the others'), when the shape re-optimised without them is as good within `gap`."""
    small = (q > 0) & (q < _PRUNE * q.max())
    if not small.any() or effort.exhausted:
        return q
    value = model.objective(q, weights)[0]
    trial = precision_shape(model, weights, np.where(small, 0.0, q), gap, iterations, effort)
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
    model: ErrorModel,
    weights: np.ndarray,
    l1: float,
    total: float,
    start: np.ndarray,
    exact: bool,
    tolerance: float = 1e-7,
    iterations: int = 3000,
    effort: Effort | None = None,
) -> np.ndarray:
    """ε shares x ≥ 0, Σ x = 1, minimising the workload error under pure DP.

    Only candidates positive in `start` can be chosen; the result is never worse than `start`.
    Stops at a KKT point within `tolerance`: every used share's marginal gain −∂f/∂x_A is
    within that factor of their x-weighted mean (the Lagrange multiplier of Σ x = 1), or when
    `effort` is used up.
    """
    effort = effort if effort is not None else Effort()
    objective = _pure_objective(model, weights, l1, total, exact)
    x: np.ndarray = start / start.sum()
    used = x > 0
    value, grad = objective(x)
    if not math.isfinite(value):
        return x
    power = 1 / 3
    for _ in range(iterations):
        gain = np.maximum(-grad, 0.0)
        multiplier = float(np.dot(x, gain))
        if multiplier <= 0 or float(np.max(gain[used])) <= multiplier * (1 + tolerance):
            break
        # The full step need not lower a coupled objective: shorten it (a smaller power)
        # until it does, and lengthen it again after a success.
        for _ in range(40):
            if not effort.spend(model.size):
                break
            trial = x * (gain / multiplier) ** power
            trial /= trial.sum()
            trial_value, trial_grad = objective(trial)
            if trial_value < value:
                break
            power /= 2
        else:
            break  # no step lowers it: a KKT point up to rounding
        if effort.exhausted:
            break
        x, value, grad = trial, trial_value, trial_grad
        power = min(1 / 3, power * 2)
    best = x
    best_value = value
    # Shares the updates shrink towards 0 (1e-125 of ε seen) are dropped when that costs
    # nothing beyond rounding: measuring them would add noise of 1e125.
    small = (best < 1e-5 * best.max()) & (best > 0)
    if small.any():
        trial = np.where(small, 0.0, best)
        trial /= trial.sum()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if objective(trial)[0] <= best_value * (1 + 1e-9):
                return trial
    return best


def laplace_value(model: ErrorModel, weights: np.ndarray, shares: np.ndarray) -> float:
    """The workload error of ε shares under continuous Laplace noise (p ∝ ε², scale-free)."""
    return model.objective(shares**2, weights)[0]


def sparsest_epsilon_shape(
    model: ErrorModel,
    weights: np.ndarray,
    shape: np.ndarray,
    passes: int = 3,
    effort: Effort | None = None,
) -> np.ndarray:
    """`shape` improved by dropping measurements, one at a time, smallest share first.

    Under pure DP the cost Σ ε_A is concave in the precisions (p_A ∝ ε_A²), so the problem has
    a local optimum on every face of the simplex: the gradient in ε_A vanishes as ε_A → 0, and
    no update brings a dropped measurement back or drops a kept one. A short local search over
    the measured set finds the better faces (continuous Laplace; scale-free, so done once per
    table set)."""

    effort = effort if effort is not None else Effort()
    best, best_value = shape, laplace_value(model, weights, shape)
    for _ in range(passes):
        improved = False
        for j in np.argsort(np.where(best > 0, best, np.inf)):
            if effort.exhausted:
                return best
            if best[j] <= 0 or np.count_nonzero(best) == 1:
                continue
            # a dropped measurement can leave a cell unestimable: inf error, not a warning
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                trial = epsilon_shape(
                    model,
                    weights,
                    1,
                    1.0,
                    np.where(np.arange(best.size) == j, 0.0, best),
                    exact=False,
                    effort=effort,
                )
                trial_value = laplace_value(model, weights, trial)
            if trial_value < best_value * (1 - 1e-9):
                best, best_value, improved = trial, trial_value, True
        if not improved:
            break
    return best
