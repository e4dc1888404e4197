"""What certifying a set of discrete Gaussians by their PLD costs, from the σ's alone (issue 25).

`dgauss_pld` lays each distinct σ's privacy loss distribution over the ±⌈11.6σ⌉ integers of its
noise (numpy arrays of that length: `points`) onto a loss grid of `_GRID`: one discrete
Gaussian's losses (−½ − x)/σ² span (2⌈11.6σ⌉ − 1)/σ², so its PMF is that span ÷ the grid wide,
and composing n copies is at most n times as wide (`width`, an upper bound: dp_accounting also
truncates the tails). Both grow without bound, the points with σ (a budget of ε = 0.001
asks for σ ≈ 9,000) and the width as σ falls (ε near 100 asks for σ ≈ 0.05): `pld_fits`
says whether a PLD stays within `limits.PLD_MAX_POINTS` and `limits.PLD_MAX_WIDTH`; where it
does not, the zCDP bound certifies instead, which is rigorous too and costs nothing to compute.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dprelease.limits import PLD_MAX_POINTS, PLD_MAX_WIDTH

PLD_GRID = 1e-3  # value_discretization_interval of the PLDs (connect-the-dots, pessimistic)
TRUNCATION = 11.6  # dp_accounting's discrete Gaussian support: ±⌈11.6σ⌉ (mass out ≤ 1e-30)


@dataclass(frozen=True)
class PldSize:
    """The arrays one certificate lays out: noise points over all distinct σ's, and the
    composed PMF's width in grid steps (an upper bound)."""

    points: int
    width: int


def pld_size(sigmas: Sequence[float], moved: int) -> PldSize:
    """The size of the composed PLD of these discrete Gaussians, `moved` cells per σ."""
    points = 0
    width = 0
    for sigma, count in Counter(sigmas).items():
        if not (math.isfinite(sigma) and sigma > 0):
            return PldSize(points=2**62, width=2**62)  # no PLD for it: zCDP decides
        bound = math.ceil(TRUNCATION * sigma)
        points += 2 * bound + 1
        span = (2 * bound - 1) / (sigma * sigma)
        width += count * moved * (math.ceil(span / PLD_GRID) + 2)
    return PldSize(points=points, width=width)


def pld_fits(size: PldSize) -> bool:
    """Whether a PLD of this size is laid out within the limits."""
    return size.points <= PLD_MAX_POINTS and size.width <= PLD_MAX_WIDTH
