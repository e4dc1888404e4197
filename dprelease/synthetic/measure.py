"""The synthesis share's draw (issue 38.6): new columns' 1-way marginals, the scores of the
candidate pairs, each round's private choice, and the chosen pair's measurement. The one
place in `synthetic/` where true counts meet noise; the noise is handed in (`SynthesisNoise`:
the release's secure samplers, or numpy's for a preview), as statistics get theirs.

Margins first: each column's 1-way marginal as the model holds it, a public value (the
published tables' records, or a new column's noisy marginal made whole, non-negative and equal
to the records' total, within its parent's counts when a table holds its parent). Then each
round (`rounds`, AIM's loop, McKenna et al. 2022) scores the open candidates against the
model's current estimate E_ab of each pair (the records' tabulation, public: a function of
the noisy measurements and public randomness): ‖M_ab − E_ab‖₁, how far the pair's true
counts are from what the model makes of it, less what measuring it would add back as noise,
√(2/π)·σ·cells (AIM's penalty: a pair of many sparse cells looks far off by sampling alone,
and its noisy table would be worse than the model). The penalty and E_ab are fixed given the
earlier outputs, so each score moves by at most Δ₁ (the count table's L1 sensitivity) when
one person is added or removed: one exponential-mechanism choice of sensitivity Δ₁ a round
(`stats.synthesis` calibrates it, `SynthesisNoise.choose` draws it), then the chosen pair
is measured with the accountant's noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np

from dprelease.accounting.mechanisms import Noise
from dprelease.accounting.mechanisms.preview import PreviewDraws
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.subtables import ancestor_codes, ancestors
from dprelease.plan.synthesis import ExtraShape, Pair
from dprelease.plan.table_spec import Sensitivity
from dprelease.synthetic.fit import round_keeping_sums, to_sums


@dataclass(frozen=True)
class ShareDraw:
    """What the synthesis share buys, as its draw needs it (public; calibrated by
    `stats.synthesis`, which also keeps its cost)."""

    shape: ExtraShape
    sensitivity: Sensitivity  # of one count table (a marginal, and a score)
    one_way: Noise | None  # each new column's 1-way marginal
    pair: Noise | None  # each chosen pair's marginal (one a round)
    selection_scale: float | None  # the Gumbel scale s of each choice, in score units
    selection_epsilon: Fraction | None  # each choice's ε = 2Δ₁/s


class SynthesisNoise(Protocol):
    """The noise of the synthesis' draw. `secure` is False for a preview."""

    secure: bool

    def counts(self, true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        """Whole numbers plus fresh noise of the accountant's mechanism."""
        ...

    def choose(self, scores: np.ndarray, scale: float, epsilon: Fraction, d_in: int) -> int:
        """The index of the largest score after Gumbel noise of `scale` (report-noisy-max,
        the exponential mechanism), ε = 2·d_in/scale for scores of sensitivity d_in."""
        ...


class PreviewSynthesisNoise(PreviewDraws):
    """numpy's pseudo-random noise with a seedable generator: for a PREVIEW only."""

    def choose(self, scores: np.ndarray, scale: float, epsilon: Fraction, d_in: int) -> int:
        noisy = scores / scale + self.rng.gumbel(size=scores.size)  # a PREVIEW only
        return int(np.argmax(noisy))


def one_way_margin(
    plan: Plan,
    noisy: np.ndarray,
    column: str,
    margins: Mapping[str, np.ndarray],
    total: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """A new column's noisy marginal made whole and non-negative, summing to `total`, or to
    its nearest held ancestor's counts within each of that ancestor's cells."""
    schema = plan.schema
    held = next((a for a in ancestors(schema, column) if a in margins), None)
    if held is None:
        groups = np.zeros(noisy.size, dtype=np.int64)
        sums = np.array([float(total)])
    else:
        groups = ancestor_codes(schema, column, held).astype(np.int64)
        sums = margins[held].astype(np.float64)
    values = to_sums(np.maximum(noisy.astype(np.float64), 0.0), groups, sums)
    return round_keeping_sums(values, groups, np.rint(sums), rng)


def pair_scores(
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    pairs: Sequence[Pair],
    estimates: Sequence[np.ndarray],
) -> np.ndarray:
    """‖M_ab − E_ab‖₁ − √(2/π)·σ·cells of each pair, E_ab the model's estimate (public): the
    higher, the more its measurement would add to the model (CONFIDENTIAL: from true counts)."""
    scores = np.empty(len(pairs))
    noise_l1 = 0.0 if budget.pair is None else math.sqrt(2 / math.pi) * budget.pair.std
    for index, (pair, estimate) in enumerate(zip(pairs, estimates, strict=True)):
        true = np.asarray(counted[pair.name], dtype=np.float64)
        if true.size != estimate.size:
            raise InternalError("a pair's estimate does not have its cells")
        scores[index] = float(np.abs(true - estimate).sum()) - noise_l1 * true.size
    return scores


def choose(budget: ShareDraw, scores: np.ndarray, noise: SynthesisNoise) -> int:
    """One round's exponential-mechanism choice: the index of the chosen score."""
    if budget.selection_scale is None or budget.selection_epsilon is None:
        raise InternalError("a round without its selection budget")
    return noise.choose(
        scores, budget.selection_scale, budget.selection_epsilon, budget.sensitivity.l1
    )


def measure_pair(
    plan: Plan,
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    pair: Pair,
    noise: SynthesisNoise,
) -> np.ndarray:
    """The chosen pair's raw noisy counts, (first × second) cells."""
    if budget.pair is None:
        raise InternalError("a chosen pair without its noise")
    noisy = noise.counts(np.asarray(counted[pair.name]), budget.pair, budget.sensitivity)
    return np.asarray(noisy, dtype=np.float64).reshape(
        plan.schema[pair.first].size, plan.schema[pair.second].size
    )


def measure_one_ways(
    plan: Plan,
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    margins: dict[str, np.ndarray],
    total: int,
    noise: SynthesisNoise,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """New columns' whole 1-way marginals. `margins` holds every published column's 1-way
    marginal (the records'); the new columns' are added to it. `counted`: the true counts of
    the synthesis tables (`plan.synthesis.synthesis_tables`), CONFIDENTIAL."""
    schema = plan.schema
    one_ways: dict[str, np.ndarray] = {}
    for column in budget.shape.new:
        if budget.one_way is None:
            raise InternalError("a new column without its 1-way noise")
        true = np.asarray(counted[budget.shape.one_way_name(column)])
        noisy = noise.counts(true, budget.one_way, budget.sensitivity)
        one_ways[column] = one_way_margin(plan, noisy, column, margins, total, rng)
        margins[column] = one_ways[column]
        for above in ancestors(schema, column):
            codes = ancestor_codes(schema, column, above)
            margins.setdefault(
                above,
                np.bincount(codes, weights=one_ways[column], minlength=schema[above].size)
                .round()
                .astype(np.int64),
            )
    return one_ways
