"""Independent references for the exact samplers: pmfs, high-precision CDFs, chosen bits.

Written apart from `dprelease.release.exact_noise` (direct sums at 120 digits, no bounds,
no shared code) so that a mistake there does not repeat here.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Iterable
from decimal import Decimal

import numpy as np

DIGITS = 120


def pmf(mechanism: str, scale: float, support: np.ndarray) -> np.ndarray:
    """P(X = k) over `support` (float64), normalised over ±(60·scale + 60)."""

    def weight(k: np.ndarray) -> np.ndarray:
        if mechanism == "discrete_laplace":
            return np.exp(-np.abs(k) / scale)
        return np.exp(-(k**2) / (2 * scale**2))

    span = int(60 * scale) + 60
    total = weight(np.arange(-span, span + 1, dtype=np.float64)).sum()
    return weight(np.asarray(support, dtype=np.float64)) / total


def chi_square(sample: np.ndarray, mechanism: str, scale: float, declared: float) -> float:
    """χ² p-value of `sample` against noise of `scale`, on ~50 bins of nearly equal mass
    under the `declared` scale (values merged into bins in order, tails pooled)."""
    from scipy import stats

    span = int(60 * declared) + 60
    support = np.arange(-span, span + 1)
    declared_pmf = pmf(mechanism, declared, support)
    edges = np.searchsorted(np.cumsum(declared_pmf), np.linspace(0, 1, 51)[1:-1])
    edges = np.unique(edges)  # bin b holds support values up to support[edges[b]]
    bins = np.concatenate([support[edges] + 0.5, [np.inf]])
    bins = np.concatenate([[-np.inf], bins])
    observed, _ = np.histogram(sample, bins=bins)
    candidate = pmf(mechanism, scale, support)
    cumulative = np.concatenate([[0.0], np.cumsum(candidate)[edges], [1.0]])
    expected = np.diff(cumulative) * sample.size
    keep = expected > 5
    statistic = float(((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum())
    return float(stats.chi2.sf(statistic, int(keep.sum()) - 1))


def cdf(mechanism: str, scale: float, value: int) -> Decimal:
    """P(X ≤ value) at 120 digits, by direct summation of the pmf."""
    with decimal.localcontext(decimal.Context(prec=DIGITS, Emin=-(10**6), Emax=10**6)):
        s = Decimal(scale)
        if mechanism == "discrete_laplace":
            q = (-1 / s).exp()
            # P(X ≥ m) = q^m / (1 + q) for m ≥ 1, by the geometric series
            upper = (q ** abs(value if value < 0 else value + 1)) / (1 + q)
        else:
            tails, total = _gaussian_tails(scale)
            m = -value if value < 0 else value + 1
            upper = tails[m] / total if m < len(tails) else Decimal(0)
        return upper if value < 0 else 1 - upper


@functools.cache
def _gaussian_tails(scale: float) -> tuple[tuple[Decimal, ...], Decimal]:
    """Σ_{k ≥ m} e^{−k²/2σ²} for m = 0 … span, and the whole sum over ℤ (same span): summed
    once per σ, so the CDF at every threshold costs one division, not ~2,600 exponentials."""
    with decimal.localcontext(decimal.Context(prec=DIGITS, Emin=-(10**6), Emax=10**6)):
        s = Decimal(scale)
        span = int(60 * scale) + 60
        weight = [(-(Decimal(k * k) / (2 * s * s))).exp() for k in range(span + 1)]
        tails = [Decimal(0)] * (span + 1)
        running = Decimal(0)
        for k in range(span, -1, -1):  # smallest first (at 120 digits the order is moot)
            running += weight[k]
            tails[k] = running
        return tuple(tails), weight[0] + 2 * tails[1]


def floor_times(value: Decimal, bits: int) -> int:
    """⌊2^bits · value⌋ (value known to 120 digits: enough for bits ≤ 256 here)."""
    with decimal.localcontext(decimal.Context(prec=DIGITS)):
        return math.floor(value * (Decimal(2) ** bits))


class FedWords:
    """A random source that returns chosen uint64 words, in order (a test hook)."""

    def __init__(self, words: Iterable[int]) -> None:
        self.words = list(words)
        self.used = 0

    def __call__(self, count: int) -> np.ndarray:
        if self.used + count > len(self.words):
            raise AssertionError("the sampler asked for more words than the test chose")
        chunk = self.words[self.used : self.used + count]
        self.used += count
        return np.array(chunk, dtype=np.uint64)
