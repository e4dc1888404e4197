"""The sparse vector technique: which candidates have an answer above T, paying for positives only.

As seed 002 states it (Hardt & Rothblum; Dwork & Roth 2014, Algorithms 1–2, "Sparse" with at
most c positives), with the noise on the threshold and on each query:

    σ = 2cΔ/ε;  T̂ = T + Lap(σ)
    for each query f_i in order:
        if f_i(x) + Lap(2σ) ≥ T̂:  output ⊤ (significant), and draw a fresh T̂ = T + Lap(σ);
                                   stop after c of them
        else:                      output ⊥ (insignificant)

It is ε-DP whatever the number of queries: each of the c rounds is an AboveThreshold with
ε/c (threshold noise 2Δ/(ε/c), query noise 4Δ/(ε/c)). Queries here are integers (counts, or
the largest cell of a table), so the noise is OpenDP's secure discrete Laplace; the proof's
shifts (T̂ + Δ, ν + 2Δ) are whole numbers, so it holds unchanged on the integers.

The question it answers: "which of these candidate tables (or areas) have a cell above T?"
Query i is the largest cell count of table i (or the count of area i). Δ = m, the unit's
max_rows, under both neighbour relations: a unit moves every cell, hence their maximum, by at
most m. Cost per accountant: ε (pure, advanced; approx with δ = 0), ρ = ε²/2 (zcdp).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprelease.accounting.mechanisms.discrete_laplace import DISCRETE_LAPLACE, laplace_scale
from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import PlanError
from dprelease.plan.table_spec import Sensitivity
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.noise import PreviewNoise, StatNoise

NoiseSource = Callable[[np.ndarray, Noise], np.ndarray]  # noisy copy of whole-number answers


@dataclass(frozen=True)
class SparseVector:
    """A calibrated Sparse(c): public threshold, noise scales, cost."""

    threshold: int
    max_positives: int
    sensitivity: int
    threshold_noise: Noise  # b = 2cΔ/ε
    query_noise: Noise  # b = 4cΔ/ε
    cost: Share

    @property
    def epsilon(self) -> Fraction:
        """ε = c·max(2Δ/b_T, 4Δ/b_Q): exact, never above the share."""
        c, d = self.max_positives, self.sensitivity
        per_round = max(
            2 * d / Fraction(self.threshold_noise.scale), 4 * d / Fraction(self.query_noise.scale)
        )
        return c * per_round


def calibrate_sparse_vector(
    threshold: int, max_positives: int, share: Share, ctx: StatContext
) -> SparseVector:
    if isinstance(max_positives, bool) or not isinstance(max_positives, int) or max_positives < 1:
        raise PlanError(
            f"The number of positives c must be a whole number ≥ 1, got {max_positives!r}."
        )
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise PlanError(f"The threshold T must be a whole number, got {threshold!r}.")
    epsilon = share.pure_epsilon()
    per_round = epsilon / max_positives
    while max_positives * Fraction(per_round) > Fraction(epsilon):  # c rounds within ε, exactly
        per_round = float(np.nextafter(per_round, 0))
    delta = ctx.max_rows
    threshold_noise = Noise(DISCRETE_LAPLACE.name, laplace_scale(per_round / 2, delta))
    query_noise = Noise(DISCRETE_LAPLACE.name, laplace_scale(per_round / 4, delta))
    svt = SparseVector(threshold, max_positives, delta, threshold_noise, query_noise, share)
    spent = svt.epsilon
    if not share.fits_pure([spent]):
        raise PlanError("The sparse vector's budget does not fit its share; raise it.")
    cost = share.pure_cost([spent])
    return SparseVector(threshold, max_positives, delta, threshold_noise, query_noise, cost)


@dataclass(frozen=True)
class SparseAnswer:
    """Public output: ⊤/⊥ for each query answered, in order; None after the mechanism halted."""

    above: tuple[bool | None, ...]

    @property
    def positives(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.above) if a)

    @property
    def halted_at(self) -> int | None:
        """Index of the last query answered when the c-th positive stopped it, else None."""
        unanswered = [i for i, a in enumerate(self.above) if a is None]
        return unanswered[0] - 1 if unanswered else None


def noise_source(noise: StatNoise, sensitivity: int) -> NoiseSource:
    """Whole-number answers plus `noise`'s draws (secure for a release, numpy for a preview)."""
    sens = Sensitivity(l1=sensitivity, l2_squared=sensitivity * sensitivity)

    def draw(values: np.ndarray, kind: Noise) -> np.ndarray:
        return noise.counts(values, kind, sens)

    return draw


def preview_source(rng: np.random.Generator) -> NoiseSource:
    """PREVIEW only (numpy noise)."""
    return noise_source(PreviewNoise(rng), 1)


def sparse_vector(answers: Sequence[int], svt: SparseVector, source: NoiseSource) -> SparseAnswer:
    """Run Sparse(c) over the true answers (CONFIDENTIAL) in order; output ⊤/⊥ only. A
    release passes `noise_source(SECURE, svt.sensitivity)` (`dprelease.release.suggest`)."""
    draw = source
    true = np.asarray(answers, dtype=np.int64)
    noisy_answers = draw(true, svt.query_noise)  # one fresh draw per query
    fresh_thresholds = draw(
        np.full(svt.max_positives, svt.threshold, dtype=np.int64), svt.threshold_noise
    )
    above: list[bool | None] = [None] * len(true)
    positives = 0
    for i, value in enumerate(noisy_answers):
        hit = bool(value >= fresh_thresholds[positives])
        above[i] = hit
        if hit:
            positives += 1
            if positives == svt.max_positives:
                break
    return SparseAnswer(tuple(above))


def largest_cells(tables: Sequence[np.ndarray]) -> list[int]:
    """CONFIDENTIAL: each candidate table's largest cell count (the queries of the question)."""
    return [int(t.max()) if t.size else 0 for t in tables]
