"""Independent references for the exact samplers: pmfs, high-precision CDFs, chosen bits.

Written apart from `dprelease.release.exact_noise` (direct sums at 120 digits, no bounds,
no shared code) so that a mistake there does not repeat here.
"""

from __future__ import annotations

import decimal
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
            span = int(60 * scale) + 60
            weight = [(-(Decimal(k * k) / (2 * s * s))).exp() for k in range(span + 1)]
            total = weight[0] + 2 * sum(weight[1:])
            m = -value if value < 0 else value + 1
            upper = sum(weight[m:]) / total
        return upper if value < 0 else 1 - upper


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
