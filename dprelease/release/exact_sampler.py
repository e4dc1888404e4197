"""Exact, secure, vectorised inverse-CDF sampling of symmetric integer noise.

The machinery shared by `exact_noise` (the discrete Laplace and the discrete Gaussian):
a distribution is given by its upper tails A_m = P(X ≥ m) (m ≥ 1, symmetric: P(X ≤ −m) = A_m),
known only through *bounds* computed in high precision, and by an exact sampler of its tail
beyond the table.

Why the draw is exact
---------------------
1. Randomness. Every uniform U ∈ [0, 1) is an infinite string of independent fair bits from
   the operating system's CSPRNG (`os.urandom`, read in bulk into uint64 words), known only
   by its first L bits V: U ∈ [V/2^L, (V+1)/2^L). No PRNG, no seed; more bits are read only
   when they are needed (a "lazily extended" uniform).
2. The table. For the thresholds T_i = P(X ≤ i), i = −K−1 … K, we keep f_i = ⌊2^64 T_i⌋,
   each *certain*: computed from bounds lo ≤ T_i ≤ hi with ⌊2^64 lo⌋ = ⌊2^64 hi⌋, the
   precision raised until they agree. The outcome is j = #{i : T_i ≤ U} (inverse CDF): the
   value −K−1+j in the table, or a tail when j = 0 or j = 2K+2.
3. One word per cell decides almost always. With V the first 64 bits: f_i < V implies
   T_i < (f_i+1)/2^64 ≤ V/2^64 ≤ U; f_i > V implies T_i ≥ f_i/2^64 ≥ (V+1)/2^64 > U. So
   `searchsorted(f, V, 'left')` counts every threshold decided at 64 bits, and only the
   thresholds with f_i = V (probability ≈ 2^-64 per cell) are undecided. For those, more
   words are read and ⌊2^L T_i⌋ is computed (certain, as above) at L = 128, 192, … until
   it differs from V; the comparison is then exact. No floating-point number is ever
   compared with U, so the drawn distribution is the declared one exactly.
4. The tails (|X| ≥ K+1, probability ≤ 2^-24 per side when the table is full size) are
   drawn by the distribution's own exact sampler of the conditional law, by symmetry as
   magnitudes with the sign of the side.

Certainty of the bounds: `decimal` at P digits; +, −, ×, ÷ and `exp`, `ln` are correctly
rounded (relative error ≤ u = ½·10^(1−P) each). A bound is built from at most 2^20 such
operations on arguments of size ≤ 10^6, so its relative error is below 2^20·u + 10^6·u ≪
10^(12−P) = `relative_error(P)`, the slack every bound adds. Bounds that do not decide a
floor only cost precision, never exactness.

Table size: K is the smallest half-width whose tails are ≤ 2^-24 a side, capped at
`MAX_HALF_WIDTH` (2^15, a table of 65,538 words). Above the cap (discrete Laplace b ≳ 1,970,
discrete Gaussian σ ≳ 5,600) the table is not built: `release.noise` draws such scales with
OpenDP, whose cost does not grow with the scale.

Test hooks: `words` (the random source; tests feed chosen bits) and `half_width` (a smaller
table, so that the tail branch runs often). A release never passes either.
"""

from __future__ import annotations

import decimal
import functools
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import numpy as np

from dprelease.errors import InternalError

WORD_BITS = 64
TAIL_MASS = 2.0**-24  # per side: the table covers the rest
MAX_HALF_WIDTH = 2**15  # K ≤ this: at most 65,538 thresholds
CHUNK = 1 << 20  # cells per batch of random words (8 MiB)
MAX_BITS = 64 * 64  # a uniform needing more bits than this has probability < 2^-4000
MAX_ARGUMENT = 10**6  # the largest exp/ln argument the error allowance covers

RandomWords = Callable[[int], np.ndarray]
Bounds = tuple[Fraction, Fraction]  # exact rationals: no rounding after the bounds


def os_random_words(count: int) -> np.ndarray:
    """`count` uniform uint64 words from the operating system's CSPRNG."""
    return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)


def digits_for(bits: int) -> int:
    """Decimal digits that normally decide a floor at 2^-bits (with room for the slack)."""
    return math.ceil(bits * math.log10(2)) + 24


def relative_error(digits: int) -> Decimal:
    """A bound on the relative error of any quantity computed here at `digits` digits."""
    return Decimal(10) ** (12 - digits)


def context(digits: int) -> decimal.Context:
    return decimal.Context(prec=digits, Emin=-9_999_999, Emax=9_999_999)


def widen(value: Decimal, digits: int) -> Bounds:
    """[value·(1−e), value·(1+e)], exactly, for a positive value computed at `digits` digits."""
    error = Fraction(relative_error(digits))
    exact = Fraction(value)
    return exact * (1 - error), exact * (1 + error)


def complement(bounds: Bounds) -> Bounds:
    """Bounds on 1 − T from bounds on T (exact)."""
    return 1 - bounds[1], 1 - bounds[0]


def certain_floor(bounds: Bounds, bits: int) -> int | None:
    """⌊2^bits·T⌋ when the bounds lo ≤ T ≤ hi decide it, else None (exact rationals)."""
    low = math.floor(bounds[0] * 2**bits)
    high = math.floor(bounds[1] * 2**bits)
    return low if low == high else None


class LazyUniform:
    """U ∈ [0, 1), known by its first `bits` bits `value`; more are read on demand."""

    def __init__(self, first_word: int, words: RandomWords) -> None:
        self.value = first_word
        self.bits = WORD_BITS
        self._words = words

    def extend(self) -> None:
        if self.bits >= MAX_BITS:
            raise InternalError("a uniform needed more than 4096 bits")
        self.value = (self.value << WORD_BITS) | int(self._words(1)[0])
        self.bits += WORD_BITS

    def interval(self) -> tuple[Fraction, Fraction]:
        """U ∈ [low, high)."""
        return Fraction(self.value, 2**self.bits), Fraction(self.value + 1, 2**self.bits)

    def below(self, threshold: Callable[[int], Bounds]) -> bool:
        """Exactly whether U < T, where threshold(digits) gives bounds lo ≤ T ≤ hi."""
        while True:
            low, high = self.interval()
            bounds = threshold(digits_for(self.bits))
            if high <= bounds[0]:
                return True  # U < high ≤ lo ≤ T
            if low >= bounds[1]:
                return False  # U ≥ low ≥ hi ≥ T
            self.extend()

    def floor_of(self, image: Callable[[Fraction, Fraction, int], Bounds | None]) -> int:
        """Exactly ⌊g(U)⌋ for a monotone g: image(low, high, digits) bounds g over U's
        interval (None when it cannot yet, e.g. ln 0)."""
        while True:
            low, high = self.interval()
            bounds = image(low, high, digits_for(self.bits))
            if bounds is not None:
                first, last = math.floor(bounds[0]), math.floor(bounds[1])
                if first == last:
                    return first
            self.extend()


class SymmetricTableSampler(ABC):
    """Exact draws of a symmetric integer distribution: a table for |X| ≤ K, tails beyond.

    Subclasses give `upper_tail(m, digits)` (bounds on A_m = P(X ≥ m), m ≥ 1),
    `half_width_needed()` (the K whose tails are ≤ TAIL_MASS a side) and
    `tail_magnitudes(count)` (exact draws of |X| given |X| ≥ K+1).
    """

    def __init__(self, *, words: RandomWords = os_random_words, half_width: int | None = None):
        self.words = words
        needed = self.half_width_needed()
        if needed > MAX_HALF_WIDTH:
            raise InternalError("the scale is too large for an exact table")
        self.half_width = needed if half_width is None else half_width
        self._floors = self._build_floors()

    @abstractmethod
    def upper_tail(self, m: int, digits: int) -> Bounds:
        """Bounds on P(X ≥ m) for m ≥ 1."""

    @abstractmethod
    def half_width_needed(self) -> int:
        """The smallest K with P(X ≥ K+1) ≤ TAIL_MASS (need not be exact: it sizes a table)."""

    @abstractmethod
    def tail_magnitudes(self, count: int) -> np.ndarray:
        """`count` exact draws of |X| given |X| ≥ K+1."""

    def upper_tails(self, digits: int) -> list[Bounds]:
        """Bounds on A_1 … A_{K+1}; a subclass may compute them together."""
        return [self.upper_tail(m, digits) for m in range(1, self.half_width + 2)]

    # --- the table ----------------------------------------------------------------------

    def threshold(self, index: int, digits: int) -> Bounds:
        """Bounds on T_index = P(X ≤ index − K − 1), index = 0 … 2K+1."""
        value = index - self.half_width - 1
        if value < 0:
            return self.upper_tail(-value, digits)
        return complement(self.upper_tail(value + 1, digits))

    def _build_floors(self) -> np.ndarray:
        k = self.half_width
        digits = digits_for(WORD_BITS)
        tails = self.upper_tails(digits)
        floors = np.empty(2 * k + 2, dtype=np.uint64)
        for index in range(2 * k + 2):
            value = index - k - 1
            bounds = tails[-value - 1] if value < 0 else complement(tails[value])
            floor = certain_floor(bounds, WORD_BITS)
            extra = 0
            while floor is None:  # rare: T_i within the slack of a multiple of 2^-64
                extra += 20
                floor = certain_floor(self.threshold(index, digits + extra), WORD_BITS)
            floors[index] = floor
        if np.any(floors[1:] < floors[:-1]):
            raise InternalError("the thresholds of an exact table are not increasing")
        return floors

    def _resolve(self, word: int, first: int) -> int:
        """j = #{i : T_i ≤ U} when f_first = V: compare U with each such T_i exactly."""
        uniform = LazyUniform(word, self.words)
        index = first
        while index < self._floors.size and int(self._floors[index]) == word:
            if uniform.below(functools.partial(self.threshold, index)):
                break
            index += 1
        return index

    def outcomes(self, words: np.ndarray) -> np.ndarray:
        """j = #{i : T_i ≤ U} for each first word (the undecided ones resolved exactly)."""
        outcome = np.searchsorted(self._floors, words, side="left")
        at = np.minimum(outcome, self._floors.size - 1)
        for cell in np.flatnonzero(self._floors[at] == words):
            outcome[cell] = self._resolve(int(words[cell]), int(outcome[cell]))
        return outcome

    # --- draws --------------------------------------------------------------------------

    def table_draws(self, count: int) -> np.ndarray:
        """`count` outcomes of the table alone, as values; tails as ±(K+1) (a marker)."""
        outcome = self.outcomes(self.words(count))
        return outcome.astype(np.int64) - (self.half_width + 1)

    def sample(self, size: int) -> np.ndarray:
        """`size` exact, independent draws of X (int64)."""
        out = np.empty(size, dtype=np.int64)
        for start in range(0, size, CHUNK):
            out[start : start + CHUNK] = self._sample_chunk(min(CHUNK, size - start))
        return out

    def _sample_chunk(self, size: int) -> np.ndarray:
        values = self.table_draws(size)
        edge = self.half_width + 1
        tails = np.flatnonzero(np.abs(values) == edge)
        if tails.size:
            values[tails] = np.sign(values[tails]) * self.tail_magnitudes(tails.size)
        return values
