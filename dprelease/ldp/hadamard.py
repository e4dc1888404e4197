"""Hadamard response (Acharya, Sun & Zhang 2019), with its exact variance.

Take K = the smallest power of two > d and the K×K Hadamard matrix H[r, j] = (−1)^{popcount(r & j)}.
Value v owns the set C_v = {j : H[v+1, j] = +1} of K/2 outputs (row 0, all ones, is unused).
The respondent reports one j ∈ 0..K−1: uniform within C_v with probability e^ε/(e^ε+1), else
uniform outside it. Every output then has probability 2e^ε/(K(e^ε+1)) or 2/(K(e^ε+1)):
the ratio is e^ε exactly.

A report j supports v when j ∈ C_v. Rows v+1 ≠ v'+1 are orthogonal and neither is row 0,
so |C_v ∩ C_{v'}| = K/4: the report of v' lands in C_v with probability
(K/4)·(e^ε + 1)·2/(K(e^ε+1)) = 1/2. So p = e^ε/(e^ε+1), q* = 1/2, and the support counts are
sums of independent Bernoullis as in the pure framework:

    Var[ĉ(v)] = (n_v·p(1−p) + (n − n_v)/4) / (p − 1/2)²,  Var* = n·(e^ε+1)²/(e^ε−1)²

the same as BLH, with log₂K bits per report and no hashing on the server.
"""

from __future__ import annotations

import math

import numpy as np

from dprelease.ldp.base import FrequencyProtocol, Reports, Support, batched_bincount


def hadamard_size(d: int) -> int:
    return 1 << d.bit_length()  # the smallest power of two > d


def _parity(values: np.ndarray) -> np.ndarray:
    """popcount(values) mod 2, for non-negative int64."""
    x = values.astype(np.uint64)
    for shift in (32, 16, 8, 4, 2, 1):
        x ^= x >> np.uint64(shift)
    return (x & np.uint64(1)).astype(bool)


EXACT_FLOAT = 2**53  # every integer below this is a float64
BLOCK_BITS = 5  # stages done at once: one product with the 32×32 Hadamard matrix


def walsh_hadamard(counts: np.ndarray) -> np.ndarray:
    """H @ counts along the last axis (length a power of two), exactly, as int64.

    The stages (one per bit) commute, so `BLOCK_BITS` of them are one product with a small
    Hadamard matrix, which BLAS does in float64 about three times faster than int64
    butterflies over 2^20 values or more (issue 25). Exact while Σ|counts| < 2^53: every partial
    sum is then an integer that a float holds; larger inputs take the int64 butterflies."""
    counts = np.asarray(counts)
    if float(np.abs(counts).sum(dtype=np.float64)) >= EXACT_FLOAT / 2:
        return _butterflies(counts)
    size = counts.shape[-1]
    lead = counts.shape[:-1]
    bits = size.bit_length() - 1
    out = counts.astype(np.float64)
    done = 0
    while done < bits:
        step = min(BLOCK_BITS, bits - done)
        below = 1 << done  # the stages already done act on the lowest bits
        blocks = out.reshape(*lead, size // (below << step), 1 << step, below)
        out = np.matmul(_hadamard(step), blocks).reshape(*lead, size)
        done += step
    exact: np.ndarray = np.rint(out).astype(np.int64)
    return exact


def _hadamard(bits: int) -> np.ndarray:
    """The 2^bits × 2^bits Hadamard matrix (Sylvester's), as float64."""
    rows = np.arange(1 << bits)
    matrix: np.ndarray = 1.0 - 2.0 * _parity(rows[:, None] & rows[None, :])
    return matrix


def _butterflies(counts: np.ndarray) -> np.ndarray:
    """H @ counts in int64, K·log₂K additions (for sums beyond a float's integers)."""
    out = counts.astype(np.int64).copy()
    size = out.shape[-1]
    half = 1
    while half < size:
        blocks = out.reshape(*out.shape[:-1], size // (2 * half), 2, half)
        first, second = blocks[..., 0, :], blocks[..., 1, :]  # views into `out`
        kept = first.copy()
        first += second  # in place: three passes over the data, not six
        np.subtract(kept, second, out=second)
        half *= 2
    return out


class HadamardResponse(FrequencyProtocol):
    name = "HR"
    title = "Hadamard response"

    def probabilities(self, epsilon: float, d: int) -> Support:
        return Support(p=math.exp(epsilon) / (math.exp(epsilon) + 1), q=0.5)

    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports:
        size = hadamard_size(d)
        rows = values.astype(np.int64) + 1
        inside = rng.random(values.shape) < self.probabilities(epsilon, d).p
        outputs = rng.integers(0, size, size=values.shape, dtype=np.int64)
        # Flipping the lowest set bit of the row flips membership in C_v: a bijection
        # between C_v and its complement, so the result is uniform on the chosen side.
        in_set = ~_parity(rows & outputs)
        flip = rows & -rows
        return (np.where(in_set == inside, outputs, outputs ^ flip),)

    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray:
        size = hadamard_size(d)
        per_output = batched_bincount(reports[0], size)
        n = per_output.sum(axis=-1, keepdims=True)
        # reports in C_v = (n + (H·counts)[v+1]) / 2
        counts: np.ndarray = (n + walsh_hadamard(per_output)[..., 1 : d + 1]) // 2
        return counts

    def output_distribution(self, epsilon: float, d: int) -> np.ndarray:
        size = hadamard_size(d)
        rows = np.arange(1, d + 1, dtype=np.int64)[:, None]
        in_set = ~_parity(rows & np.arange(size, dtype=np.int64)[None, :])
        e = math.exp(epsilon)
        return np.where(in_set, 2 * e, 2.0) / (size * (e + 1))
