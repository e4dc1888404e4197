"""Issue 35, finding 4: the smooth sensitivity in near-linear time, the same float as before.

The old scan over t cost O(1/β²): a median of 1 M incomes took over 300 s at ε = 1e-4. The
pairs algorithm must give exactly the scan's value (the slow reference below is the scan
without its pruning; since issue 38.3 both use the textbook windows) and answer in a few seconds.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from dprelease.stats.smooth_quantile import (
    CAUCHY_B,
    laplace_constants,
    order_statistic,
    padded,
    smooth_sensitivity,
)


def _reference(x: np.ndarray, r: int, beta: float, steps: int) -> float:
    """The scan, every t: max_t e^{−βt}·B((t+1)d) (as floats, the same order), with the
    textbook windows of (t + 1)·d places (issue 38.3; the old ones had twice as many)."""
    last, best, t = x.size - 1, 0.0, 0
    while True:
        w = (t + 1) * steps
        starts = np.arange(r - w, r + 1)
        gaps = x[np.clip(starts + w, 0, last)] - x[np.clip(starts, 0, last)]
        best = max(best, math.exp(-beta * t) * float(gaps.max()))
        if w >= last:
            return best
        t += 1


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_value_is_the_scans_value(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(200):
        n = int(rng.integers(1, 80))
        values = [
            rng.normal(5, 2, n),
            rng.integers(0, 4, n).astype(float),  # ties
            rng.exponential(2, n),
        ][trial % 3]
        x = padded(values, 0.0, 10.0)
        _, r = order_statistic(x, Fraction(int(rng.integers(1, 20)), 20))
        beta = float(10 ** rng.uniform(-6, 1))
        steps = int(rng.integers(1, 5))
        assert smooth_sensitivity(x, r, beta, steps) == _reference(x, r, beta, steps)


def test_a_median_of_a_million_values_at_epsilon_1e_4_answers_in_seconds() -> None:
    x = padded(np.random.default_rng(1).lognormal(10, 1, 1_000_000), 0.0, 1e7)
    _, r = order_statistic(x, Fraction(1, 2))
    _, laplace_beta = laplace_constants(Fraction(1, 10_000), Fraction(1, 10**6))
    for beta in (laplace_beta, float(Fraction(1, 10_000) * CAUCHY_B)):
        start = time.process_time()
        assert smooth_sensitivity(x, r, beta, 1) > 0
        assert time.process_time() - start < 10  # about 1 s here; the old scan: over 300 s
