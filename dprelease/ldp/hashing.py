"""Local hashing: each respondent hashes the value into g buckets with a hash function of
their own, then runs GRR over the g buckets and sends (hash seed, bucket).

With a uniform hash, p = e^ε / (e^ε + g − 1) and a report supports every value that hashes
to the reported bucket, so q* = 1/g:

    Var*[ĉ(v)] = n·q*(1−q*)/(p−q*)² = n·(e^ε + g − 1)² / ((e^ε − 1)²·(g − 1))

BLH (Bassily & Smith 2015) takes g = 2: n·(e^ε + 1)²/(e^ε − 1)². OLH (Wang et al. 2017) takes
the g that minimises it, e^ε + 1; a respondent needs a whole number of buckets, so here
g = round(e^ε) + 1, whose variance is at most a few per cent above the real optimum.

Privacy holds for every hash function: given the seed (independent of the value), the
bucket is GRR over g buckets, ratio p/q = e^ε. Accuracy needs a uniform hash: ours is the
SplitMix64 finaliser of (seed, value), whose bias modulo g is below g/2^64.
"""

from __future__ import annotations

import math

import numpy as np

from dprelease.ldp.base import FrequencyProtocol, Reports, Support

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
HASH_SEEDS_ENUMERATED = 64  # seeds whose exact output table the LDP check enumerates


def bucket(seeds: np.ndarray, value: int | np.ndarray, g: int) -> np.ndarray:
    """h_seed(value) in 0..g−1: SplitMix64's finaliser of seed + (value + 1)·golden ratio."""
    with np.errstate(over="ignore"):
        z = seeds + (np.asarray(value, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z = z ^ (z >> np.uint64(31))
    buckets: np.ndarray = (z % np.uint64(g)).astype(np.int64)
    return buckets


class LocalHashing(FrequencyProtocol):
    binary: bool

    @property
    def chooses_g(self) -> bool:  # type: ignore[override]
        return not self.binary  # binary hashing always has g = 2

    def buckets(self, epsilon: float) -> int:
        return 2 if self.binary else round(math.exp(epsilon)) + 1

    def probabilities(self, epsilon: float, d: int) -> Support:
        g = self.buckets(epsilon)
        return Support(p=math.exp(epsilon) / (math.exp(epsilon) + g - 1), q=1 / g, g=g)

    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports:
        """Reports (seeds, buckets), both of the shape of `values`."""
        support = self.probabilities(epsilon, d)
        g = self.buckets(epsilon)
        seeds = rng.integers(0, 2**64, size=values.shape, dtype=np.uint64)
        hashed = bucket(seeds, values, g)
        keep = rng.random(values.shape) < support.p
        other = (hashed + rng.integers(1, g, size=values.shape)) % g
        return seeds, np.where(keep, hashed, other)

    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray:
        seeds, reported = reports
        g = self.buckets(epsilon)
        counts = np.empty((*seeds.shape[:-1], d), dtype=np.int64)
        for value in range(d):  # the server hashes every value with every seed
            counts[..., value] = np.count_nonzero(bucket(seeds, value, g) == reported, axis=-1)
        return counts

    def output_distribution(self, epsilon: float, d: int) -> np.ndarray:
        """P[x, (seed, bucket)] for the first HASH_SEEDS_ENUMERATED seeds, each seed equally
        likely: the real hash, so the table is what this code sends."""
        support = self.probabilities(epsilon, d)
        g = self.buckets(epsilon)
        other = (1 - support.p) / (g - 1)  # GRR over g buckets: each other bucket
        seeds = np.arange(HASH_SEEDS_ENUMERATED, dtype=np.uint64)
        table = np.empty((d, len(seeds) * g))
        for x in range(d):
            hashed = bucket(seeds, x, g)
            row = np.where(np.arange(g)[None, :] == hashed[:, None], support.p, other)
            table[x] = row.ravel() / len(seeds)
        return table


class BinaryLocalHashing(LocalHashing):
    name = "BLH"
    title = "binary local hashing"
    binary = True


class OptimalLocalHashing(LocalHashing):
    name = "OLH"
    title = "optimal local hashing"
    binary = False
