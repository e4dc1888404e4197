"""Hadamard response (Acharya, Sun & Zhang, AISTATS 2019), both variants, with exact variances.

One-bit variant (high privacy). K = the smallest power of two > d, H[r, j] = (−1)^{popcount(r & j)}.
Value v owns the set C_v = {j : H[v+1, j] = +1} of K/2 outputs (row 0, all ones, is unused).
The respondent reports one j ∈ 0..K−1: uniform within C_v with probability e^ε/(e^ε+1), else
uniform outside it. Two rows v+1 ≠ v'+1 share K/4 of their +1s, so another value's report lands
in C_v with probability 1/2: p = e^ε/(e^ε+1), q* = 1/2 and Var* = n·(e^ε+1)²/(e^ε−1)², BLH's.

General variant (the paper's blocks). The outputs are B blocks of b (a power of two) each,
K = B·b; block t holds m ≤ b−1 values, value v = t·m + r − 1 owning C_v = {t·b + z :
H_b[r, z] = +1}, s = b/2 outputs. With D = s·e^ε + K − s a report is y with probability e^ε/D
for y ∈ C_v and 1/D otherwise: the ratio is e^ε exactly. B = 1 is the one-bit variant. The
server takes T_v = Σ_z H_b[r, z]·(reports at t·b + z) = 2·|reports in C_v| − |reports in
block t|. Write ρ = D/b = (e^ε−1)/2 + B. A report of v adds +1 w.p. e^ε/(2ρ), −1 w.p. 1/(2ρ);
one of another value in block t adds ±1 w.p. (e^ε+1)/(4ρ) each (rows r ≠ r' share b/4 of their
+1s); one from another block adds ±1 w.p. 1/(2ρ) each. So E[T_v] = n_v·μ, μ = (e^ε−1)/(2ρ),
and the variance per report is a − μ² (a report of v), a = (e^ε+1)/(2ρ) (another value of v's
block) or β = 1/ρ (another block):

    ĉ(v) = T_v/μ,   Var[ĉ(v)] = (n_v·(a − μ²) + (N_t − n_v)·a + (n − N_t)·β) / μ²    (exact)

with N_t the respondents whose value is in v's block. In the pure framework's terms the
support count I_v = (n + T_v)/2 has p = (1 + μ)/2 and q* = 1/2, so ĉ is `Support.estimate`.
The variance of a count near 0 depends on N_t: the figure stated (`BlockSupport`) is the one
with the other respondents spread evenly over the other d − 1 values, N_t − n_v =
n·(m−1)/(d−1); it is exact for any data when m = 1 or B = 1, and `count_variances` gives the
exact figure for given counts.

The block size is chosen from ε and d: the power of two b (with B = ⌈d/(b−1)⌉ blocks and values
spread evenly, m = ⌈d/B⌉) whose stated variance is least, b = K (B = 1) on a tie. B = 1 wins at
every ε ≤ 1 when d ≥ 3 (a test checks d up to 2,000); above, blocks win: at d = 100 the variance
is 1.4× lower than the one-bit variant's at ε = 2, 2.9× at ε = 3 and 32× at ε = 5. For large d
it is about 8/e^ε per respondent, twice OUE's 4e^ε/(e^ε−1)², with ⌈log₂K⌉ bits per report (OUE
sends d) and one size-b transform per block on the server.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

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


@dataclass(frozen=True)
class Blocks:
    """The general variant's layout: `count` blocks of `size` outputs, `per_block` values each
    (the last block may hold fewer)."""

    count: int  # B
    size: int  # b, a power of two
    per_block: int  # m ≤ b − 1

    @property
    def outputs(self) -> int:
        return self.count * self.size  # K


@dataclass(frozen=True)
class BlockSupport(Support):
    """The general variant's support: p = (1 + μ)/2, q* = 1/2, and per-report variances of
    I_v = (n + T_v)/2 that differ by where the report's value lies: `inside`/4 for another
    value of v's block, `outside`/4 for a value of another block; `share` is the share of the
    other respondents counted in v's block (the stated figure's assumption, see the module)."""

    inside: float = 1.0
    outside: float = 1.0
    share: float = 1.0

    def variance(self, n: int) -> float:
        return float(self.variance_exact(n, 0))

    def variance_exact(self, n: int, true_count: float) -> float:
        """The value's own reports, then the others: `share` of them in its block."""
        mu = 2 * (self.p - self.q)
        others = self.share * self.inside + (1 - self.share) * self.outside
        return (true_count * (self.inside - mu**2) + (n - true_count) * others) / mu**2


def _block_terms(epsilon: float, blocks: Blocks) -> tuple[float, float, float]:
    """μ, a, β of the module docstring: E[T_v] per report of v, Var per report of another
    value of v's block, Var per report from another block."""
    e = math.exp(epsilon)
    rho = (e - 1) / 2 + blocks.count
    return (e - 1) / (2 * rho), (e + 1) / (2 * rho), 1 / rho


def _block_support(epsilon: float, d: int, blocks: Blocks) -> Support:
    if blocks.count == 1:  # the one-bit variant, stated as before
        return Support(p=math.exp(epsilon) / (math.exp(epsilon) + 1), q=0.5)
    mu, inside, outside = _block_terms(epsilon, blocks)
    share = (blocks.per_block - 1) / (d - 1)
    return BlockSupport(p=(1 + mu) / 2, q=0.5, inside=inside, outside=outside, share=share)


@lru_cache(maxsize=4096)
def hadamard_blocks(epsilon: float, d: int) -> Blocks:
    """The layout whose stated variance is least; on a tie the fewer blocks (B = 1 first)."""
    best: tuple[float, Blocks] | None = None
    size = hadamard_size(d)
    while size >= 2:
        per_block = -(-d // -(-d // (size - 1)))  # ⌈d/B⌉ with B = ⌈d/(b−1)⌉: even blocks
        blocks = Blocks(-(-d // per_block), size, per_block)
        variance = _block_support(epsilon, d, blocks).variance(1)
        if best is None or variance < best[0] * (1 - 1e-12):
            best = (variance, blocks)
        size //= 2
    assert best is not None
    return best[1]


class HadamardResponse(FrequencyProtocol):
    name = "HR"
    title = "Hadamard response"

    def blocks(self, epsilon: float, d: int) -> Blocks:
        return hadamard_blocks(float(epsilon), int(d))

    def probabilities(self, epsilon: float, d: int) -> Support:
        return _block_support(epsilon, d, self.blocks(epsilon, d))

    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports:
        layout = self.blocks(epsilon, d)
        e = math.exp(epsilon)
        weight = layout.size * (e - 1) / 2 + layout.outputs  # D
        block, rows = np.divmod(values.astype(np.int64), layout.per_block)
        rows += 1
        side = rng.random(values.shape)
        inside = side < layout.size * e / (2 * weight)
        offsets = rng.integers(0, layout.size, size=values.shape, dtype=np.int64)
        # Flipping the lowest set bit of the row flips membership in C_v: a bijection
        # between C_v and the rest of its block, so the result is uniform on the chosen side.
        in_set = ~_parity(rows & offsets)
        flip = rows & -rows
        chosen = np.where(in_set == inside, offsets, offsets ^ flip)
        if layout.count == 1:
            return (chosen,)
        # From another block (probability (K − b)/D): any of its b outputs, uniformly.
        away = side >= layout.size * (e + 1) / (2 * weight)
        moved = (block + rng.integers(1, layout.count, size=values.shape)) % layout.count
        return (np.where(away, moved * layout.size + offsets, block * layout.size + chosen),)

    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray:
        """I_v = (n + T_v)/2: T_v is entry r of block t's transform (a half when B > 1)."""
        layout = self.blocks(epsilon, d)
        per_output = batched_bincount(reports[0], layout.outputs)
        lead = per_output.shape[:-1]
        n = per_output.sum(axis=-1, keepdims=True)
        spectra = walsh_hadamard(per_output.reshape(*lead, layout.count, layout.size))
        rows = spectra[..., 1 : layout.per_block + 1].reshape(*lead, -1)[..., :d]
        if layout.count == 1:
            exact: np.ndarray = (n + rows) // 2  # |reports in C_v|, a whole number
            return exact
        halves: np.ndarray = (n + rows) / 2
        return halves

    def output_distribution(self, epsilon: float, d: int) -> np.ndarray:
        layout = self.blocks(epsilon, d)
        e = math.exp(epsilon)
        block, rows = np.divmod(np.arange(d, dtype=np.int64), layout.per_block)
        out_block, offsets = np.divmod(np.arange(layout.outputs, dtype=np.int64), layout.size)
        member = (block[:, None] == out_block[None, :]) & ~_parity(
            (rows[:, None] + 1) & offsets[None, :]
        )
        weight = layout.size * (e - 1) / 2 + layout.outputs
        table: np.ndarray = np.where(member, e, 1.0) / weight
        return table

    def count_variances(self, epsilon: float, d: int, true_counts: np.ndarray) -> np.ndarray:
        """Var[ĉ(v)] for every v, exact for any data: its block's respondents N_t counted."""
        layout = self.blocks(epsilon, d)
        counts = np.asarray(true_counts, dtype=np.float64)
        if layout.count == 1:
            return super().count_variances(epsilon, d, counts)
        mu, inside, outside = _block_terms(epsilon, layout)
        n = counts.sum()
        padded = np.zeros(layout.count * layout.per_block)
        padded[:d] = counts
        in_block = np.repeat(padded.reshape(layout.count, -1).sum(axis=1), layout.per_block)[:d]
        spread = counts * (inside - mu**2) + (in_block - counts) * inside
        variances: np.ndarray = (spread + (n - in_block) * outside) / mu**2
        return variances
