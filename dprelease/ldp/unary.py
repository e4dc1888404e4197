"""Unary encoding: the value as a one-hot vector of d bits, each bit randomised on its own.

| protocol | P(1 → 1) = p | P(0 → 1) = q | Var*[ĉ(v)] = n·q(1−q)/(p−q)² |
|---|---|---|---|
| SUE (basic one-time RAPPOR) | e^{ε/2}/(e^{ε/2}+1) | 1/(e^{ε/2}+1) | n·e^{ε/2}/(e^{ε/2}−1)² |
| OUE (optimised, Wang et al.) | 1/2 | 1/(e^ε+1) | n·4e^ε/(e^ε−1)² |

Two inputs differ in two bits, so the likelihood ratio of a report is at most
(p/q)·((1−q)/(1−p)), which is e^ε for both. Bit v of a report supports v, so q* = q.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dprelease.ldp.base import USERS_PER_CHUNK_BITS, FrequencyProtocol, Reports, Support


class UnaryEncoding(FrequencyProtocol):
    optimised: bool

    def probabilities(self, epsilon: float, d: int) -> Support:
        if self.optimised:
            return Support(p=0.5, q=1 / (math.exp(epsilon) + 1))
        half = math.exp(epsilon / 2)
        return Support(p=half / (half + 1), q=1 / (half + 1))

    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports:
        """Reports as booleans of shape (..., n, d)."""
        support = self.probabilities(epsilon, d)
        # float32 draws: half the memory traffic; p and q are far from float32's resolution.
        uniform = rng.random((*values.shape, d), dtype=np.float32)
        bits = uniform < np.float32(support.q)
        own = np.take_along_axis(uniform, values[..., None].astype(np.intp), axis=-1)
        np.put_along_axis(
            bits, values[..., None].astype(np.intp), own < np.float32(support.p), axis=-1
        )
        return (bits,)

    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray:
        counts: np.ndarray = np.count_nonzero(reports[0], axis=-2)
        return counts

    def support_counts(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Randomise in chunks of users, so 10^6 reports of 100 bits never sit in memory."""
        users = max(1, USERS_PER_CHUNK_BITS // d)
        total = np.zeros((*values.shape[:-1], d), dtype=np.int64)
        for start in range(0, values.shape[-1], users):
            chunk = values[..., start : start + users]
            total += self.support(self.randomise(chunk, epsilon, d, rng), epsilon, d)
        return total

    def output_distribution(self, epsilon: float, d: int) -> np.ndarray:
        """P[x, y] over all 2^d bit vectors y (column index = y read as binary, bit v = 2^v)."""
        support = self.probabilities(epsilon, d)
        vectors = np.array(list(itertools.product((0, 1), repeat=d)))[:, ::-1].astype(bool)
        table = np.empty((d, len(vectors)))
        for x in range(d):
            one = np.arange(d) == x
            chance_of_one = np.where(one, support.p, support.q)
            table[x] = np.prod(np.where(vectors, chance_of_one, 1 - chance_of_one), axis=1)
        return table


class SymmetricUnaryEncoding(UnaryEncoding):
    name = "SUE"
    title = "symmetric unary encoding (basic one-time RAPPOR)"
    optimised = False


class OptimisedUnaryEncoding(UnaryEncoding):
    name = "OUE"
    title = "optimised unary encoding"
    optimised = True
