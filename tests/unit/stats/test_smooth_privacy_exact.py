"""Issue 35, finding 1: the exact privacy loss of smooth-sensitivity quantiles with Laplace noise.

The smooth bound S(D) is deterministic per data set, so the released value before clamping and
rounding (post-processing) is Laplace with location f(D) and scale S(D)/a. For small data sets
and every neighbour (one value added from a grid, or one removed), the hockey-stick divergence
of the two laws is computed in closed form and must stay ≤ δ at every ε up to the plan limit.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dprelease.limits import EPSILON_LIMIT
from dprelease.stats.smooth_quantile import (
    laplace_constants,
    order_statistic,
    padded,
    smooth_sensitivity,
)

LO, HI = 0.0, 10.0
DELTA = 1e-6
EPSILONS = [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 13.0, 20.0, 50.0, EPSILON_LIMIT]
GRID = [0.0, 0.066, 1.0, 4.908, 5.0, 9.5, 10.0]


def _pieces(mu: float, b: float, cuts: list[float]) -> list[tuple[float, float]]:
    """ln density of Laplace(mu, b) as (intercept, slope) on each interval between cuts."""
    out = []
    for left, right in itertools.pairwise([-math.inf, *cuts, math.inf]):
        mid = (
            (left + right) / 2
            if math.isfinite(left + right)
            else (right - 1 if math.isfinite(right) else left + 1)
        )
        sign = 1.0 if mid >= mu else -1.0  # |y − mu| = sign·(y − mu) on this interval
        out.append((-math.log(2 * b) + sign * mu / b, -sign / b))
    return out


def _integral(c: float, s: float, u: float, v: float) -> float:
    """∫_u^v exp(c + s·y) dy, exactly (u < v, finite where s has the wrong sign)."""
    if s == 0:
        return math.exp(c) * (v - u)
    hi = math.exp(c + s * v) if math.isfinite(v) or s < 0 else math.inf
    lo = math.exp(c + s * u) if math.isfinite(u) or s > 0 else 0.0
    if not math.isfinite(v):
        hi = 0.0
    if not math.isfinite(u):
        lo = 0.0
    return (hi - lo) / s


def hockey_stick(p: tuple[float, float], q: tuple[float, float], epsilon: float) -> float:
    """∫ max(0, p(y) − e^ε q(y)) dy for Laplace laws p, q given as (location, scale)."""
    cuts = sorted({p[0], q[0]})
    bounds = list(itertools.pairwise([-math.inf, *cuts, math.inf]))
    total = 0.0
    for (left, right), (cp, sp), (cq, sq) in zip(
        bounds, _pieces(*p, cuts), _pieces(*q, cuts), strict=True
    ):
        # ln p − ln(e^ε q) = k + m·y on this interval: positive on a half-line
        k, m = cp - cq - epsilon, sp - sq
        u, v = left, right
        if m == 0:
            if k <= 0:
                continue
        elif m > 0:
            u = max(u, -k / m)
        else:
            v = min(v, -k / m)
        if u >= v:
            continue
        total += _integral(cp, sp, u, v) - math.exp(epsilon) * _integral(cq, sq, u, v)
    return max(total, 0.0)


def _law(values: list[float], a: float, beta: float) -> tuple[float, float]:
    x = padded(np.asarray(values, dtype=float), LO, HI)
    value, r = order_statistic(x, Fraction(1, 2))
    return value, smooth_sensitivity(x, r, beta, 1) / a


def _neighbours(values: list[float]):
    for extra in GRID:
        yield sorted([*values, extra])
    for i in range(len(values)):
        yield values[:i] + values[i + 1 :]


def _worst(epsilon: float, constants: tuple[float, float]) -> float:
    a, beta = constants
    worst = 0.0
    for size in (1, 2, 3):
        for values in itertools.combinations_with_replacement([0.066, 4.908, 5.0, 9.5], size):
            data = sorted(values)
            here = _law(data, a, beta)
            for other in _neighbours(data):
                if not other:
                    continue
                there = _law(other, a, beta)
                worst = max(worst, hockey_stick(here, there, epsilon),
                            hockey_stick(there, here, epsilon))  # fmt: skip
    return worst


def test_the_closed_form_matches_a_numeric_integral() -> None:
    p, q = (0.3, 1.2), (1.1, 0.7)
    ys = np.linspace(-60, 60, 2_000_001)
    dens = lambda law: np.exp(-np.abs(ys - law[0]) / law[1]) / (2 * law[1])  # noqa: E731
    numeric = np.trapezoid(np.maximum(dens(p) - math.exp(0.5) * dens(q), 0), ys)
    assert hockey_stick(p, q, 0.5) == pytest.approx(numeric, rel=1e-6)


def test_the_issue_case_broke_delta_with_the_lemma_constants() -> None:
    """The old constants (a = ε/2, β = ε/(2 ln(2/δ))) at ε = 20: δ = 5.2e-6 > 1e-6 (with
    the textbook bound of issue 38.3; with the older, wider bound the issue's pair [0.066,
    4.908] and [0.066, 4.908, 4.908] gave 1.95e-6)."""
    eps = 20.0
    a, beta = eps / 2, eps / (2 * math.log(2 / DELTA))
    here, there = _law([0.066, 2.5, 4.95, 5.0], a, beta), _law([0.066, 4.95, 5.0], a, beta)
    assert max(hockey_stick(here, there, eps), hockey_stick(there, here, eps)) > 5e-6


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_exact_privacy_loss_stays_within_delta(epsilon: float) -> None:
    constants = laplace_constants(Fraction(epsilon), Fraction(DELTA))
    assert _worst(epsilon, constants) <= DELTA
