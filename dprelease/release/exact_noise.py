"""Exact, secure samplers of the discrete Laplace and the discrete Gaussian (int64 arrays).

Both are `exact_sampler.SymmetricTableSampler`s (see there why a draw is exact): one 64-bit
word from the OS CSPRNG and one `searchsorted` per cell, ≥ 10^7 cells/s on one core. What each
adds is its upper tail A_m = P(X ≥ m), bounded in high precision, and its exact tail sampler:

| noise | P(X = k) ∝ | A_m (m ≥ 1) | |X| given |X| ≥ K+1 |
|---|---|---|---|
| discrete Laplace, b | q^|k|, q = e^{−1/b} | q^m / (1 + q) | K+1 + (X given X ≥ 0) |
| discrete Gaussian, σ | e^{−k²/2σ²} | Σ_{k≥m} w_k / (1 + 2Σ_{k≥1} w_k) | rejection, below |

Discrete Laplace tail: P(X = k | X ≥ K+1) ∝ q^k = q^{K+1}·q^{k−K−1}, the law of K+1 + Y with
Y ~ X given X ≥ 0 (P(Y = y) ∝ q^y). Y is drawn from the same table, discarding negative
draws; a Y that falls in the right tail again adds K+1 and draws again (vectorised).

Discrete Gaussian tail, m = K+1 (Canonne, Kamath & Steinke 2020 use the same two exact
steps): with k = m + j, e^{−k²/2σ²} ∝ r^j · e^{−j²/2σ²}, r = e^{−m/σ²}. Propose
j ~ Geometric(r), P(j) = (1−r) r^j, as j = ⌊−ln(U)·σ²/m⌋ (P(j ≥ g) = P(U ≤ r^g) = r^g); accept
with probability e^{−j²/2σ²} ≤ 1 by comparing a second uniform with it. Both floors and the
comparison are decided exactly on lazily extended uniforms. The accepted j has the target
law; tails are rare (≤ 2^-24 a side), so this runs cell by cell.

Normaliser of the discrete Gaussian: the sum runs to M with w_M < 10^-(P+5); the rest is
bounded by w_{M+1}·(1+t)/t, t = (2M+3)/2σ² (the ratio of consecutive terms beyond M is
≤ e^{−t}, and 1/(1−e^{−t}) ≤ (1+t)/t), and enters the bounds as an interval.
"""

from __future__ import annotations

import decimal
import functools
import math
import threading
from decimal import Decimal
from fractions import Fraction

import numpy as np

from dprelease.release.exact_sampler import (
    MAX_HALF_WIDTH,
    TAIL_MASS,
    Bounds,
    LazyUniform,
    RandomWords,
    SymmetricTableSampler,
    context,
    os_random_words,
    relative_error,
    widen,
)

_LOG_TAIL = -math.log(TAIL_MASS)  # 24 ln 2
_EXP_CAP = 10_000


def _decimal(value: Fraction, digits: int) -> Decimal:
    with decimal.localcontext(context(digits)):
        return Decimal(value.numerator) / Decimal(value.denominator)


def _exp_minus(x: Fraction, digits: int) -> Bounds:
    """Bounds on e^{−x}, x ≥ 0; beyond x = 10^4 the valid bounds [0, e^{−10^4}] (far below
    2^-MAX_BITS, so the comparison still decides) keep arguments within the error allowance."""
    if x > _EXP_CAP:
        return Fraction(0), _exp_minus(Fraction(_EXP_CAP), digits)[1]
    with decimal.localcontext(context(digits)):
        value = (-_decimal(x, digits)).exp()
    return widen(value, digits)


class DiscreteLaplaceSampler(SymmetricTableSampler):
    """P(X = k) = (1−q)/(1+q)·q^|k|, q = e^{−1/b}."""

    def __init__(
        self, scale: float, *, words: RandomWords = os_random_words, half_width: int | None = None
    ) -> None:
        self.scale = scale
        super().__init__(words=words, half_width=half_width)

    @staticmethod
    def half_width_for(scale: float) -> int:
        """K with A_{K+1} = q^{K+1}/(1+q) ≤ 2^-24: K+1 ≥ 24 b ln 2."""
        return max(1, math.ceil(scale * _LOG_TAIL))

    def half_width_needed(self) -> int:
        return self.half_width_for(self.scale)

    def upper_tail(self, m: int, digits: int) -> Bounds:
        with decimal.localcontext(context(digits)):
            b = Decimal(self.scale)  # exact: a float is a dyadic rational
            value = (-(Decimal(m) / b)).exp() / (1 + (-(1 / b)).exp())
        return widen(value, digits)

    def tail_magnitudes(self, count: int) -> np.ndarray:
        edge = self.half_width + 1
        magnitudes = np.full(count, edge, dtype=np.int64)
        pending = np.arange(count)
        while pending.size:
            draws = self.table_draws(2 * pending.size + 16)
            draws = draws[draws >= 0][: pending.size]  # Y ~ X given X ≥ 0 (K+1 marks a tail)
            cells = pending[: draws.size]
            magnitudes[cells] += draws
            again = draws == edge  # Y itself in the tail: Y = K+1 + a fresh Y
            pending = np.concatenate([cells[again], pending[draws.size :]])
        return magnitudes


class DiscreteGaussianSampler(SymmetricTableSampler):
    """P(X = k) ∝ w_k = e^{−k²/2σ²}."""

    def __init__(
        self, sigma: float, *, words: RandomWords = os_random_words, half_width: int | None = None
    ) -> None:
        self.sigma = sigma
        self._tails: dict[int, list[Bounds]] = {}
        super().__init__(words=words, half_width=half_width)

    @staticmethod
    def half_width_for(sigma: float) -> int:
        """K with A_{K+1} ≲ 2^-24 (Gaussian tail e^{−(K+1)²/2σ²}; it only sizes the table)."""
        return max(1, math.ceil(sigma * math.sqrt(2 * _LOG_TAIL)))

    def half_width_needed(self) -> int:
        return self.half_width_for(self.sigma)

    def _summation_end(self, digits: int) -> int:
        """M with w_M < 10^-(digits+5), at least K+2."""
        end = math.ceil(self.sigma * math.sqrt(2 * (digits + 5) * math.log(10)))
        return max(end, self.half_width + 2)

    def upper_tails(self, digits: int) -> list[Bounds]:
        """Bounds on A_1 … A_{K+1}, all from one pass of suffix sums (cached per precision)."""
        if digits in self._tails:
            return self._tails[digits]
        end = self._summation_end(digits)
        with decimal.localcontext(context(digits)):
            two_var = 2 * Decimal(self.sigma) ** 2
            suffix = [Decimal(0)] * (self.half_width + 2)  # suffix[m] = Σ_{k=m}^{M} w_k
            total = Decimal(0)
            for k in range(end, 0, -1):
                total += (-(Decimal(k * k) / two_var)).exp()
                if k <= self.half_width + 1:
                    suffix[k] = total
            t = Decimal(2 * end + 3) / two_var
            rest = widen((-(Decimal((end + 1) ** 2) / two_var)).exp() * (1 + t) / t, digits)[1]
        # exact from here: S_m ∈ [s_m(1−e), s_m(1+e) + rest], Z = 1 + 2 S_1, A_m = S_m / Z
        sums = [widen(value, digits) if value else (Fraction(0), Fraction(0)) for value in suffix]
        low_z, high_z = 1 + 2 * sums[1][0], 1 + 2 * (sums[1][1] + rest)
        tails = [
            (sums[m][0] / high_z, (sums[m][1] + rest) / low_z)
            for m in range(1, self.half_width + 2)
        ]
        self._tails[digits] = tails
        return tails

    def upper_tail(self, m: int, digits: int) -> Bounds:
        return self.upper_tails(digits)[m - 1]

    def tail_magnitudes(self, count: int) -> np.ndarray:
        return np.array([self._tail_magnitude() for _ in range(count)], dtype=np.int64)

    def _tail_magnitude(self) -> int:
        m = self.half_width + 1
        var = Fraction(self.sigma) ** 2
        while True:
            j = self._geometric(m, var)
            exponent = Fraction(j * j) / (2 * var)
            accept = LazyUniform(int(self.words(1)[0]), self.words)
            if accept.below(functools.partial(_exp_minus, exponent)):
                return m + j

    def _geometric(self, m: int, var: Fraction) -> int:
        """⌊−ln(U)·σ²/m⌋: P(j) = (1−r)r^j with r = e^{−m/σ²}."""
        factor = var / m

        def image(low: Fraction, high: Fraction, digits: int) -> Bounds | None:
            if low == 0:
                return None  # ln 0: read more bits
            with decimal.localcontext(context(digits)):
                c = _decimal(factor, digits)
                smallest = -_decimal(high, digits).ln() * c  # g decreases: g(high) < g(U)
                largest = -_decimal(low, digits).ln() * c
            error = Fraction(relative_error(digits))  # relative, and absolute near g = 0
            lowest = max(Fraction(0), Fraction(smallest) * (1 - error) - error)  # g(U) > 0
            return lowest, Fraction(largest) * (1 + error) + error

        return LazyUniform(int(self.words(1)[0]), self.words).floor_of(image)


# Building a table costs about 35 µs (discrete Laplace) or 80 µs (discrete Gaussian) per unit
# of half-width K; OpenDP draws a cell in about 6 or 12 µs (bench/bench_noise.py). A new table
# pays for itself from about 6K cells; below that OpenDP draws, unless the table is built.
CELLS_PER_HALF_WIDTH = 6
_CACHE_SIZE = 256
_built: dict[tuple[type[SymmetricTableSampler], float], SymmetricTableSampler] = {}
_lock = threading.Lock()


def _sampler(
    kind: type[DiscreteLaplaceSampler] | type[DiscreteGaussianSampler], scale: float, cells: int
) -> SymmetricTableSampler | None:
    """The built (or newly built) exact sampler, or None where OpenDP is the better choice:
    a table over MAX_HALF_WIDTH, or a new table that costs more than drawing `cells` with
    OpenDP. Tables are public (functions of the scale alone), so they are kept for reuse."""
    key = (kind, scale)
    with _lock:
        built = _built.get(key)
    if built is not None:
        return built
    half_width = kind.half_width_for(scale)
    if half_width > MAX_HALF_WIDTH or cells < CELLS_PER_HALF_WIDTH * half_width:
        return None
    sampler = kind(scale)
    with _lock:
        if len(_built) >= _CACHE_SIZE:
            _built.clear()
        _built[key] = sampler
    return sampler


def discrete_laplace(scale: float, cells: int) -> SymmetricTableSampler | None:
    """The exact sampler of scale b for `cells` draws, or None: OpenDP is better (see above)."""
    return _sampler(DiscreteLaplaceSampler, scale, cells)


def discrete_gaussian(sigma: float, cells: int) -> SymmetricTableSampler | None:
    """The exact sampler of σ for `cells` draws, or None: OpenDP is better (see above)."""
    return _sampler(DiscreteGaussianSampler, sigma, cells)
