"""The synthesis share's draw (issue 38.6): new columns' 1-way marginals, the private choice of
the extra pairs, and their measurement. The one place in `synthetic/` where true counts meet
noise; the noise is handed in (`SynthesisNoise`: the release's secure samplers, or numpy's for
a preview), as statistics get theirs.

Margins first: each column's 1-way marginal as the model holds it, a public value (the
published tables' records, or a new column's noisy marginal made whole, non-negative and equal
to the records' total, within its parent's counts when a table holds its parent). The choice
is MST's (McKenna et al. 2021), its components being the published tables' (`plan.synthesis`): each
candidate pair (a, b) is scored once by ‖M_ab − m_a m_bᵀ/N‖₁, how far its true counts are
from what the model would make of the pair (independence), less what measuring it would add
back as noise, √(2/π)·σ·cells (AIM's penalty, McKenna et al. 2022: a pair of many sparse
cells looks far from independence by sampling alone, and its noisy table would be worse than
independence); the penalty is public, so the score's sensitivity stays Δ₁. Then,
`joins` times, one exponential-mechanism choice among the pairs that join two groups not yet
joined (Kruskal's order, each choice a fresh draw). The chosen pairs are measured with the
accountant's noise (`stats.synthesis`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
    pair: Noise | None  # each chosen pair's marginal
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


@dataclass(frozen=True)
class ExtraMarginals:
    """What the share measured: new columns' whole 1-way marginals, the chosen pairs (in the
    order chosen) and their raw noisy counts (over the pair's (first, second) cells)."""

    one_ways: Mapping[str, np.ndarray]
    pairs: tuple[tuple[Pair, np.ndarray], ...]


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
    plan: Plan,
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    margins: Mapping[str, np.ndarray],
    total: int,
) -> np.ndarray:
    """‖M_ab − m_a m_bᵀ/N‖₁ − √(2/π)·σ·cells of every candidate: the higher, the more its
    measurement adds to independence (CONFIDENTIAL: from true counts)."""
    scores = np.empty(len(budget.shape.candidates))
    noise_l1 = 0.0 if budget.pair is None else math.sqrt(2 / math.pi) * budget.pair.std
    for index, pair in enumerate(budget.shape.candidates):
        true = np.asarray(counted[pair.name], dtype=np.float64)
        expected = np.outer(margins[pair.first], margins[pair.second]).ravel() / max(total, 1)
        scores[index] = float(np.abs(true - expected).sum()) - noise_l1 * true.size
    return scores


def choose_pairs(budget: ShareDraw, scores: np.ndarray, noise: SynthesisNoise) -> tuple[Pair, ...]:
    """`joins` exponential-mechanism choices, each among the pairs that join two groups."""
    shape = budget.shape
    if budget.selection_scale is None or budget.selection_epsilon is None:
        return ()
    group = list(range(len(shape.components)))

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    ends = [(shape.component_of(p.first), shape.component_of(p.second)) for p in shape.candidates]
    chosen: list[Pair] = []
    for _ in range(shape.joins):
        open_ = [i for i, (a, b) in enumerate(ends) if find(a) != find(b)]
        if not open_:
            raise InternalError("no candidate pair joins the remaining groups")
        pick = noise.choose(
            scores[open_], budget.selection_scale, budget.selection_epsilon, budget.sensitivity.l1
        )
        index = open_[pick]
        a, b = ends[index]
        group[find(a)] = find(b)
        chosen.append(shape.candidates[index])
    return tuple(chosen)


def measure_extra(
    plan: Plan,
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    margins: dict[str, np.ndarray],
    total: int,
    noise: SynthesisNoise,
    rng: np.random.Generator,
) -> ExtraMarginals:
    """The share's draw. `margins` holds every published column's 1-way marginal (the
    records'); the new columns' are added to it. `counted`: the true counts of the synthesis
    tables (`extra.synthesis_tables`), CONFIDENTIAL; nothing returned is a true count."""
    schema = plan.schema
    shape = budget.shape
    one_ways: dict[str, np.ndarray] = {}
    for column in shape.new:
        if budget.one_way is None:
            raise InternalError("a new column without its 1-way noise")
        true = np.asarray(counted[shape.one_way_name(column)])
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
    scores = pair_scores(plan, budget, counted, margins, total)
    chosen = choose_pairs(budget, scores, noise)
    measured = []
    for pair in chosen:
        if budget.pair is None:
            raise InternalError("a chosen pair without its noise")
        true = np.asarray(counted[pair.name])
        measured.append((pair, noise.counts(true, budget.pair, budget.sensitivity)))
    return ExtraMarginals(one_ways, tuple(measured))
