"""What every local-DP frequency protocol shares: inputs checked, the random source, the
support-count estimator and its exact variance (Wang, Blocki, Li & Jha, USENIX Security 2017).

The "pure" framework of Wang et al.: each report y *supports* a set of values. With
p = P(the report of v supports v) and q* = P(the report of v' ≠ v supports v), the number
I_v of reports that support v is a sum of independent Bernoullis: n_v of them with
probability p and n − n_v with probability q*. Hence

    ĉ(v) = (I_v − n·q*) / (p − q*)                                   (unbiased)
    Var[ĉ(v)] = (n_v·p(1−p) + (n − n_v)·q*(1−q*)) / (p − q*)²        (exact)
              ≈ n·q*(1−q*) / (p − q*)²  for a value whose true count is near 0.
"""

from __future__ import annotations

import math
import secrets
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from dprelease.errors import DPReleaseError, quote

MAX_EPSILON = 100.0  # as for plans: a larger ε is refused as meaningless
MAX_DOMAIN = 1_000_000
USERS_PER_CHUNK_BITS = 20_000_000  # unary reports are randomised in chunks of ≤ this many bits


class LdpError(DPReleaseError):
    """A local-DP input the user can fix: ε, domain size, n, protocol or column."""


def margin_rows(n: int) -> int:
    """The row count margins are computed at: n rounded up to a power of two. A margin at the
    exact n, with ε and the estimate, gives the number of rows back (issue 34: `moe_near_zero`
    inverted to it); at the next power of two it says only that bracket, and is wider."""
    return 1 << max(0, int(n) - 1).bit_length()


def margin_reports(reports: int, n: int) -> int:
    """A level's or group's report count scaled as `margin_rows` scales n (rounded up)."""
    return -(-int(reports) * margin_rows(n) // max(int(n), 1))


def check_epsilon(epsilon: float) -> float:
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise LdpError(f"epsilon must be a finite number greater than 0, got {quote(epsilon)}.")
    if epsilon > MAX_EPSILON:
        raise LdpError(f"epsilon above {MAX_EPSILON:g} is meaningless, got {quote(epsilon)}.")
    return float(epsilon)


def check_domain_size(d: int) -> int:
    if isinstance(d, bool) or not isinstance(d, int | np.integer) or not 2 <= d <= MAX_DOMAIN:
        raise LdpError(
            f"The domain size must be a whole number from 2 to {MAX_DOMAIN:,}, got {quote(d)}."
        )
    return int(d)


def check_respondents(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise LdpError(f"The number of respondents n must be a whole number ≥ 1, got {quote(n)}.")
    return int(n)


def secure_generator() -> np.random.Generator:
    """A numpy generator seeded with 128 bits from the operating system's CSPRNG (`secrets`).

    Why this is secure enough for randomised response: the threat is someone predicting a
    respondent's coin flips, which needs the generator's state. The seed is fresh per call,
    comes from the OS CSPRNG, is never stored, logged or returned, and in a deployment each
    respondent's device seeds its own generator and reveals only the outcome of a few
    threshold comparisons, far too little to reconstruct a 128-bit PCG64DXSM state. PCG64DXSM
    is not a CSPRNG in the formal sense; it is used because 10^8 secure draws per simulation
    would not fit the time target. Every randomiser here takes its generator as an argument,
    so a deployment may pass one backed by a CSPRNG bit stream instead.
    """
    return np.random.Generator(np.random.PCG64DXSM(secrets.randbits(128)))


@dataclass(frozen=True)
class Support:
    """p = P(report of v supports v); q = q* = P(report of v' ≠ v supports v); g for hashing."""

    p: float
    q: float
    g: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.q < self.p <= 1:
            raise LdpError(f"support probabilities need 0 ≤ q < p ≤ 1, got p={self.p}, q={self.q}")

    def variance(self, n: int) -> float:
        """Var of a count whose true value is near 0: n·q*(1−q*)/(p−q*)² (Wang et al.)."""
        return n * self.q * (1 - self.q) / (self.p - self.q) ** 2

    def variance_exact(self, n: int, true_count: float) -> float:
        """(n_v·p(1−p) + (n − n_v)·q*(1−q*)) / (p − q*)², exact for any true count n_v."""
        spread = true_count * self.p * (1 - self.p) + (n - true_count) * self.q * (1 - self.q)
        return spread / (self.p - self.q) ** 2

    def estimate(self, support_counts: np.ndarray, n: int | np.ndarray) -> np.ndarray:
        """ĉ(v) = (I_v − n·q*) / (p − q*), for the last axis of `support_counts`."""
        n_column = np.asarray(n, dtype=np.float64)[..., None] if np.ndim(n) else float(n)
        return (np.asarray(support_counts, dtype=np.float64) - n_column * self.q) / (
            self.p - self.q
        )


Reports = tuple[np.ndarray, ...]  # a protocol's reports; users along axis `user_axis`


class FrequencyProtocol(ABC):
    """One frequency oracle: randomiser (client), support counts (server), probabilities.

    `randomise` takes codes 0..d−1 of shape (..., n) and returns the reports; `support`
    counts, per leading index, how many reports support each value: shape (..., d).
    `output_distribution` enumerates P[input, output] exactly, for the ε-LDP check.
    """

    name: str
    title: str
    chooses_g = False  # its hash range g is chosen from ε (then shown beside its accuracy)

    @abstractmethod
    def probabilities(self, epsilon: float, d: int) -> Support: ...

    @abstractmethod
    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports: ...

    @abstractmethod
    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray: ...

    @abstractmethod
    def output_distribution(self, epsilon: float, d: int) -> np.ndarray: ...

    def estimate_counts(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Randomise `values` (shape (..., n)) and return the unbiased count estimates."""
        support = self.probabilities(epsilon, d)
        return support.estimate(self.support_counts(values, epsilon, d, rng), values.shape[-1])

    def count_variances(self, epsilon: float, d: int, true_counts: np.ndarray) -> np.ndarray:
        """Var[ĉ(v)] for every value v, exact, given every value's true count (shape (d,))."""
        counts = np.asarray(true_counts, dtype=np.float64)
        support, n = self.probabilities(epsilon, d), int(counts.sum())
        return np.array([support.variance_exact(n, float(count)) for count in counts])

    def support_counts(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Randomise and aggregate; protocols with large reports override this to chunk."""
        return self.support(self.randomise(values, epsilon, d, rng), epsilon, d)


def batched_bincount(codes: np.ndarray, size: int) -> np.ndarray:
    """Counts of 0..size−1 along the last axis, for every leading index at once."""
    leading = codes.shape[:-1]
    rows = int(np.prod(leading)) if leading else 1
    offsets = (np.arange(rows, dtype=np.int64) * size).reshape(*leading, 1) if leading else 0
    flat = (codes.astype(np.int64) + offsets).ravel()
    return np.bincount(flat, minlength=rows * size).reshape(*leading, size)
