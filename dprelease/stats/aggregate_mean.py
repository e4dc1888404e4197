"""Means without clamping bounds: sample and aggregate (Nissim, Raskhodnikova & Smith 2007).

Each of a cell's rows is put in one of K groups, independently and uniformly at random (K is
the plan's public `groups`, default 200); each non-empty group's mean is one value of the
aggregated set, and the release is a private median of that set: the exponential mechanism
over the public grid of candidate means lo, lo + r, …, ≤ hi (`quantile`). The plan's bounds
are a wide public range for that grid (values beyond it count as its ends), not a clamp
chosen to hold typical values: a group mean far out only moves the median by one rank.

Why this is private. Fix the groups of the rows both neighbours share (the analysis holds for
every assignment, so the assignment needs no secret randomness): adding or removing one row
changes one group's mean, which in the aggregated set is one value replaced (2 steps of the
symmetric distance), or one value added or removed (the group was or becomes empty, 1 step).
A unit of d rows (d = m under add/remove, 2m under replace, m = max_rows) therefore moves the
set by at most 2d steps, and the median's score sensitivity is Δ = 2d·½ = d (`quantile`'s
Δ = d_in·max(q, 1 − q) with d_in = 2d). Rows in several cells compose in parallel as for the
quantile (ε linear in d_in). Cost: the exponential mechanism's, ε = 2Δ/s (ρ = ε²/8).

Why it avoids the clamped mean's bias. A clamped mean moves every value above the bound to
the bound: on skewed data (incomes) it is biased down by Σ(x − hi)₊/n, whatever the budget.
Here nothing is clamped inside the wide range; what remains is (a) the rank error of the
private median, s·ln(K_grid/α) ranks among K group means, i.e. a spread of the group means
(≈ σ·√(K/n)) times a constant, and (b) for skewed data the median of the group means sits a
little below their mean (their own skew shrinks as n/K grows). So it needs many rows per cell.
No closed form gives its margin: the Preview measures RMSE and bias by simulation; the
data-free margin is the rank margin of the median among the K group means.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.plan.stat_spec import RobustSpec, StatSpec, stat_resolution
from dprelease.plan.summary_spec import QuantileSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import StatisticKind
from dprelease.stats.noise import PreviewNoise, StatNoise
from dprelease.stats.quantile import (
    QuantileMechanism,
    calibrate_quantile,
    quantile_pmf,
    zcdp_rho,
)
from dprelease.stats.reference import group_means as reference_group_means
from dprelease.stats.reference import offsets

MEDIAN = Fraction(1, 2)
STEPS_PER_ROW = 2  # one row changes one group's mean: one value of the set replaced


@dataclass(frozen=True)
class AggregateMechanism:
    """A mean by sample and aggregate: its groups, the median's mechanism, its cost."""

    spec: RobustSpec
    median: QuantileMechanism  # over the group means, with d_in = 2d

    @property
    def cost(self) -> Share:
        return self.median.cost


def median_spec(spec: RobustSpec) -> QuantileSpec:
    """The exponential mechanism's spec: the median over the grid of candidate means."""
    return QuantileSpec(spec.column, (MEDIAN,), spec.lo, spec.hi, stat_resolution(spec))


def calibrate_aggregate_mean(
    spec: RobustSpec, share: Share, ctx: StatContext
) -> AggregateMechanism:
    steps = StatContext(STEPS_PER_ROW * ctx.symmetric_distance, "add_remove", ctx.grouped)
    return AggregateMechanism(spec, calibrate_quantile(median_spec(spec), share, steps))


def group_means(values: np.ndarray, groups: int, rng: np.random.Generator) -> np.ndarray:
    """CONFIDENTIAL: the means of the non-empty groups of a random assignment."""
    assigned = rng.integers(0, groups, size=values.size)
    sizes = np.bincount(assigned, minlength=groups)
    sums = np.bincount(assigned, weights=values, minlength=groups)
    kept = sizes > 0
    means: np.ndarray = sums[kept] / sizes[kept]
    return means


def draw_aggregate_means(
    data: StatData, mech: AggregateMechanism, noise: StatNoise, rng: np.random.Generator
) -> np.ndarray:
    """Released means per cell: the private median of each cell's group means."""
    median = mech.median
    grid = median.grid()
    d_in = median.context.symmetric_distance
    scale, sens = median.scales[0], median.sensitivities[0]
    draw = noise.quantile(grid, MEDIAN, scale, d_in, zcdp_rho(scale, sens))
    out = np.empty(data.n_cells, dtype=np.float64)
    for cell, values in enumerate(data.groups()):
        inside = np.clip(values, mech.spec.lo, mech.spec.hi)
        out[cell] = draw(group_means(inside, mech.spec.groups, rng))
    return out


class AggregateMeanKind(StatisticKind[AggregateMechanism]):
    """A mean by sample and aggregate (`method: sample_and_aggregate`)."""

    kind = "mean"
    method = "sample_and_aggregate"
    mechanism_text = (
        "sample and aggregate: the rows split into disjoint random groups, then the "
        "exponential mechanism's median of the groups' means over a public grid (OpenDP's "
        "make_private_quantile); no clamping bounds"
    )
    zcdp_divisor = 8  # the exponential mechanism's bounded range
    needs_delta = False
    curve_unit = "rank among the group means"

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> AggregateMechanism:
        assert isinstance(spec, RobustSpec)
        return calibrate_aggregate_mean(spec, share, ctx)

    def mechanism_name(self, mech: AggregateMechanism) -> str:
        return "sample_and_aggregate"

    def error(self, mech: AggregateMechanism, confidence: float) -> dict[str, Any]:
        """The private median's rank margin among the K group means (data-free)."""
        return {
            "moe_rank": list(mech.median.rank_moe_bound(1 - confidence)),
            "groups": mech.spec.groups,
            "moe_value": None,
        }

    def sensitivity(self, mech: AggregateMechanism) -> dict[str, float | None]:
        return {"l1": float(mech.median.sensitivities[0]), "l2": None}

    def draw(self, data: StatData, mech: AggregateMechanism, noise: StatNoise) -> np.ndarray:
        # The assignment to groups needs no secret randomness (module docstring).
        return draw_aggregate_means(data, mech, noise, np.random.default_rng())

    def preview_error(
        self, data: StatData, mech: AggregateMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """RMSE and bias against the cell's true (unclamped) mean, by simulation
        (CONFIDENTIAL, the data holder's only)."""
        noise = PreviewNoise(rng)
        draws = np.stack([draw_aggregate_means(data, mech, noise, rng) for _ in range(50)])
        truth = np.array([v.mean() if v.size else np.nan for v in data.groups()])
        errors = draws - truth
        rmse, bias = np.sqrt((errors**2).mean(axis=0)), errors.mean(axis=0)
        return [{"RMSE": a, "bias": b} for a, b in zip(rmse.tolist(), bias.tolist(), strict=True)]

    def summary(self, entry: dict[str, Any]) -> str:
        error = entry["error"]
        return f"rank moe {error['moe_rank'][0]:.4g} among {error['groups']} group means"

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        return (
            f"the median of the {error['groups']} group means within ±{error['moe_rank'][0]:.4g} "
            f"ranks ({confidence}); its error in value depends on how spread the group means "
            "are (the Preview measures it)"
        )

    def short_margin(self, error: dict[str, Any]) -> str:
        return f"rank ±{error['moe_rank'][0]:.3g} of {error['groups']} group means"

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(error["moe_rank"][0])

    def expected_rmse(self, mech: AggregateMechanism, cell_rows: int) -> float:
        """On the reference cell: the exact output law of the private median over its group
        means (`reference.group_means`), its mean squared distance to the cell's mean
        (averaged over the cell's shifts across a grid step), plus the variance of the median
        of the group means itself."""
        spec, median = mech.spec, mech.median
        values, mean, spread = reference_group_means(spec.lo, spec.hi, cell_rows, spec.groups)
        grid = median.grid()
        mses = [
            float(quantile_pmf(values + shift, grid, MEDIAN, median.scales[0])
                  @ (grid - mean - shift) ** 2)
            for shift in offsets(median.spec.grid_step)
        ]  # fmt: skip
        return float(np.sqrt(np.mean(mses) + spread))

    def choice(self, spec: StatSpec) -> str:
        return (
            "sample and aggregate: no clamping bias, whatever the tail (the bounds are only a "
            "wide range for the candidates); it needs many rows per cell, since its error is a "
            "spread of group means of n/K rows each"
        )


AGGREGATE_MEAN = AggregateMeanKind()
