"""The planner's reference cell (issue 38.3): what `method: auto` computes expected errors on.

Public only: a cell of n rows (the plan's public `min_cell_rows`, else a small cell) whose
values are spread evenly over the declared bounds, the k-th at lo + (k − ½)·(hi − lo)/n. No
data is read: the same plan gives the same figures, and the same choice, whatever the data.
Each method computes its expected RMSE on this cell from its own calibrated mechanism
(`StatisticKind.expected_rmse`); the helpers below are the cell's shared arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from dprelease.stats.noise import UnitLaw
from dprelease.stats.smooth_bound import rank

OFFSETS = 8  # shifts of the reference cell across one grid step (where the truth falls on it)


def offsets(step: float) -> np.ndarray:
    """Shifts of the reference cell, evenly across one step of a grid, centred on 0: where the
    true value falls between two candidates is unknown, so a grid method's expected error is
    averaged over them (an unshifted symmetric cell would often sit on a candidate)."""
    return ((np.arange(OFFSETS) + 0.5) / OFFSETS - 0.5) * step


def quantile_value(lo: float, hi: float, n: int, q: Fraction) -> float:
    """The reference cell's q-quantile: its r-th value, r = max(1, ⌈q·n⌉)."""
    return lo + (min(rank(q, n), n) - 0.5) * (hi - lo) / n


def ranks_around(lo: float, hi: float, n: int, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """#{x < c} and #{x > c} for each candidate c, counted on the reference cell."""
    position = (grid - lo) / ((hi - lo) / n) + 0.5  # x_k < c ⟺ k < position
    below = np.clip(np.ceil(position) - 1, 0, n)
    at_most = np.clip(np.floor(position), 0, n)
    return below, n - at_most


def clamped_noise_mse(law: UnitLaw, scale: float, below: float, above: float) -> float:
    """E[(clamp(f + scale·Z) − f)²] for the standard Laplace or Cauchy Z, where the clamp
    stops the value `below` under f and `above` over it (the release's post-processing).

    Per side (half the mass), with u = c/scale: Laplace ∫₀ᵘ z²e^{−z}dz·scale² + c²e^{−u}
    = scale²(2 − e^{−u}(u² + 2u + 2)) + c²e^{−u}; Cauchy (2/π)·scale²(u − atan u) +
    c²·(2/π)·atan(1/u)."""

    def side(c: float) -> float:
        if c <= 0:
            return 0.0
        u = c / scale
        if law == "cauchy":
            return 2 / math.pi * (scale**2 * (u - math.atan(u)) + c**2 * math.atan(1 / u))
        tail = math.exp(-u)
        return scale**2 * (2 - tail * (u * u + 2 * u + 2)) + c * c * tail

    return (side(below) + side(above)) / 2


def group_means(lo: float, hi: float, n: int, groups: int) -> tuple[np.ndarray, float, float]:
    """The reference cell's group means under sample and aggregate: (their values, their
    mean, the variance of their median around it). The n rows fall in K ≈ groups·(1 − (1 −
    1/groups)^n) non-empty groups of n/K rows; a group's mean has sd τ = σ/√(n/K), σ² =
    (hi − lo)²/12 (the cell's spread), placed at the K normal quantiles around the cell's mean;
    their median's own variance ≈ (π/2)·τ²/K."""
    filled = max(1, round(groups * -math.expm1(n * math.log1p(-1 / groups))))
    mean = (lo + hi) / 2
    tau = (hi - lo) / math.sqrt(12) / math.sqrt(n / filled)
    normal = NormalDist()
    z = np.array([normal.inv_cdf((k + 0.5) / filled) for k in range(filled)])
    values = np.clip(mean + tau * z, lo, hi)
    return values, mean, math.pi / 2 * tau**2 / filled
