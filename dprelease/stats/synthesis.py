"""The synthesis share's calibration (issue 38.6): what S of the plan's total buys.

The allocator (`stats.allocation.reserve`) sets the share aside in the accountant's unit,
rounded down, before the tables split the rest. Here it is cut as AIM cuts its budget
(McKenna et al. 2022): a tenth for the private choices of the extra pairs (`rounds` of them,
one a round), the rest for the measurements, the new columns' 1-way marginals and the chosen
pairs, one equal slice each (`Share.scaled`, `Share.split`, rounded down; with no candidate
pair the 1-ways take it all):

- a marginal is measured with the accountant's own noise for a count table's sensitivity
  (`Accountant.statistic_noise`: discrete Gaussian under zcdp and renyi, discrete Laplace
  under pure and advanced, Gaussian with its δ slice under approx), its cost the slice;
- each of the `rounds` choices is one exponential mechanism (report-noisy-max with Gumbel
  noise) over scores of sensitivity Δ₁, at ε = 2Δ₁/s, bounded range: under zCDP its cost is
  ε²/8; its scale s is the smallest float whose exact cost fits the slice. A score is
  ‖M_ab − E_ab‖₁ less a public penalty, where M_ab is the pair's true count table and E_ab
  the model's estimate of it, a function of the earlier noisy measurements and the public
  randomness alone (adaptive composition: fixed given the earlier outputs). Adding or
  removing one person changes M_ab by at most Δ₁ in L1 (a count table's L1 sensitivity
  under the plan's unit and neighbours, `table_spec.sensitivity`: 1 for one row a person),
  so each score by at most Δ₁ (triangle inequality; the penalty is public), every score at once
  (sensitivity Δ₁ in L∞, what OpenDP's `make_noisy_max` maps); the scores need not move
  together, hence 2Δ₁/s, not Δ₁/s.

Every cost is reported in the accountant's unit (`Share`), and the allocator composes them
with the tables' and statistics' as it composes statistics, so the release's total is checked
against the plan's once, exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprelease.accounting.mechanisms import Noise
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.synthesis import ExtraShape, extra_shape
from dprelease.plan.table_spec import Sensitivity, sensitivity
from dprelease.stats.budget import Share
from dprelease.synthetic.measure import ShareDraw

_SCALE_STEPS = 64
SELECTION_REST = Fraction(9, 10)  # of the share, for measurements (AIM's 0.9); a tenth chooses


@dataclass(frozen=True)
class SynthesisBudget:
    """The synthesis share, what it buys (`draw`) and what each part costs (all public)."""

    share: Share  # what the allocator set aside
    draw: ShareDraw
    costs: tuple[Share, ...]  # what each part spends, in the accountant's unit

    @property
    def shape(self) -> ExtraShape:
        return self.draw.shape

    @property
    def sensitivity(self) -> Sensitivity:
        return self.draw.sensitivity

    @property
    def one_way(self) -> Noise | None:
        return self.draw.one_way

    @property
    def pair(self) -> Noise | None:
        return self.draw.pair

    @property
    def selection_epsilon(self) -> Fraction | None:
        return self.draw.selection_epsilon

    @property
    def spent(self) -> Fraction:
        """The parts' costs added up in the unit (at most the share's amount)."""
        return sum((Fraction(c.amount) for c in self.costs), Fraction(0))

    def to_dict(self, budget_share: float) -> dict[str, Any]:
        """The allocation's `synthesis` entry (plan --json and metadata.json)."""
        share = self.share
        return {
            "budget_share": budget_share,
            "accounting": share.accounting,
            "epsilon": share.epsilon,
            "delta": share.delta,
            "rho": share.rho,
            "one_way": _noise_dict(self.one_way, len(self.shape.new)),
            "pairs": _noise_dict(self.pair, self.shape.rounds),
            "selection": None
            if self.selection_epsilon is None
            else {
                "mechanism": "exponential",
                "rounds": self.shape.rounds,
                "epsilon": float(self.selection_epsilon),
                "score_sensitivity": self.sensitivity.l1,
                "candidates": len(self.shape.candidates),
            },
        }


def _noise_dict(noise: Noise | None, count: int) -> dict[str, Any] | None:
    if noise is None:
        return None
    return {
        "count": count,
        "mechanism": noise.mechanism,
        "noise_scale": noise.scale,
        "noise_std": noise.std,
    }


def selection_scale(slice_: Share, delta_1: int) -> tuple[float, Fraction]:
    """The smallest float Gumbel scale s whose choice (ε = 2Δ₁/s, bounded range) fits the
    slice exactly, and that ε."""
    scale = 2 * delta_1 / slice_.pure_epsilon(bounded_range=True)
    for _ in range(_SCALE_STEPS):
        epsilon = 2 * Fraction(delta_1) / Fraction(scale)
        if slice_.fits_pure([epsilon], bounded_range=True):
            return scale, epsilon
        scale = math.nextafter(scale, math.inf)
    raise InternalError("could not round a selection scale up to its budget")


def calibrate_synthesis(plan: Plan, share: Share) -> SynthesisBudget:
    """Cut the synthesis share into its parts (see the module docstring)."""
    shape = extra_shape(plan)
    sens = sensitivity(plan.unit, plan.neighbors)
    accountant = share.accountant
    rounds = shape.rounds
    measured = share.scaled(SELECTION_REST) if rounds else share
    slice_ = measured.split(len(shape.new) + rounds)
    costs: list[Share] = []
    one_way = pair = None
    scale = epsilon = None
    if shape.new:
        one_way = accountant.statistic_noise(slice_.amount, slice_.delta, sens)
        costs += [slice_] * len(shape.new)
    if rounds:
        choices = share.scaled(1 - SELECTION_REST)
        scale, epsilon = selection_scale(choices.split(rounds), sens.l1)
        costs.append(choices.pure_cost([epsilon] * rounds, bounded_range=True))
        pair = accountant.statistic_noise(slice_.amount, slice_.delta, sens)
        costs += [slice_] * rounds
    draw = ShareDraw(shape, sens, one_way, pair, scale, epsilon)
    found = SynthesisBudget(share, draw, tuple(costs))
    if found.spent > Fraction(share.amount):
        raise InternalError("the synthesis' parts overspend its share")
    return found
