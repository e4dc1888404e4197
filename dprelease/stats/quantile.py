"""Quantiles by the exponential mechanism over a public grid of candidates.

Utility of a candidate c for the q-quantile of a group's values x (Smith 2011; OpenDP's
`make_quantile_score_candidates`):

    u(c) = −|(1 − q)·#{x < c} − q·#{x > c}|

which is −|rank(c) − q·n| with rank(c) = #{x < c} whenever no value equals c, and is 0 at the
true quantile when values tie there. Its sensitivity, for d rows gained or lost by a group:

    Δ = d · max(q, 1 − q)

(one added row moves #{x < c} or #{x > c} by 1), so d = m under add/remove (Δ ≤ m, m/2 for the
median) and d = 2m under replace, where a unit's rows leave one group and join another (for
a replacement within a group the sized analysis gives Δ = m, never more than 2m·max(q, 1 − q)).
Rows of one unit spread over several groups only lower the sum over groups (parallel
composition: ε is linear in d, ρ quadratic).

The mechanism picks c with probability ∝ exp(u(c)/s) (Gumbel-max with scale s):

- ε-DP with ε = 2Δ/s (McSherry & Talwar 2007; seed 002): the budget of pure, approx (δ = 0)
  and advanced accounting;
- ε-bounded range, hence ρ = ε²/8 = Δ²/(2s²) zCDP (Cesar & Rogers 2021): the zcdp budget.

k quantiles of one column split the share equally (basic composition; ρ adds under zCDP) and
are sorted afterwards (post-processing), so they never cross.

Release: OpenDP's `make_private_quantile` with the zCDP measure, i.e. its noisy max with
Gumbel noise, which samples exactly this distribution with its secure exact samplers; its own
privacy map is checked against ours before it draws (`dprelease.release.stat_noise`).
Preview: numpy Gumbel-max (`dprelease.stats.noise.PreviewNoise`).

Accuracy: on given data (CONFIDENTIAL, preview only) the output distribution is known exactly,
so the margin of error in rank and in value is read off it. Without data (the planner):
P(rank error > best + s·ln(K/α)) ≤ α for K candidates (the exponential mechanism's utility
theorem, Dwork & Roth Thm 3.11 with 2Δ/ε = s); "best" is the smallest rank error any grid
candidate has (≤ the number of ties at the true quantile; 0 for continuous data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.stat_spec import StatSpec
from dprelease.plan.summary_spec import QuantileSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import NoiseFields, StatisticKind
from dprelease.stats.noise import StatNoise
from dprelease.stats.ranks import rank_errors
from dprelease.stats.reference import offsets, quantile_value, ranks_around

MECHANISM = "exponential"
_SCALE_STEPS = 64


def candidates(spec: QuantileSpec) -> np.ndarray:
    """The public grid lo, lo + step, …, up to hi (hi itself when it is on the grid)."""
    return spec.lo + spec.grid_step * np.arange(spec.candidate_count, dtype=np.float64)


def score_sensitivity(q: Fraction, ctx: StatContext) -> Fraction:
    """Δ = d·max(q, 1 − q), d = m (add/remove) or 2m (replace); exact."""
    return ctx.symmetric_distance * max(q, 1 - q)


def pure_epsilon(scale: float, sensitivity: Fraction) -> Fraction:
    """ε = 2Δ/s, exactly."""
    return 2 * sensitivity / Fraction(scale)


def zcdp_rho(scale: float, sensitivity: Fraction) -> Fraction:
    """ρ = ε²/8 = Δ²/(2s²), exactly (bounded-range analysis)."""
    return sensitivity**2 / (2 * Fraction(scale) ** 2)


def _scale_for(share: Share, sensitivity: Fraction) -> float:
    """Smallest float s (found, then nudged up) whose exact cost fits the share."""
    scale = 2 * float(sensitivity) / share.pure_epsilon(bounded_range=True)

    def fits(s: float) -> bool:  # the exponential mechanism is bounded-range (ε²/8 in ρ)
        return share.fits_pure([pure_epsilon(s, sensitivity)], bounded_range=True)

    for _ in range(_SCALE_STEPS):
        if fits(scale):
            return scale
        scale = math.nextafter(scale, math.inf)
    raise InternalError("could not round a quantile scale up to its budget")


@dataclass(frozen=True)
class QuantileMechanism:
    """Everything public about one quantile statistic: grid, scales, cost."""

    spec: QuantileSpec
    context: StatContext
    scales: tuple[float, ...]  # Gumbel scale s_j per quantile, in utility units
    cost: Share

    @property
    def sensitivities(self) -> tuple[Fraction, ...]:
        return tuple(score_sensitivity(q, self.context) for q in self.spec.quantiles)

    @property
    def epsilons(self) -> tuple[Fraction, ...]:
        """The pure ε each quantile's draw satisfies (2Δ_j/s_j)."""
        pairs = zip(self.scales, self.sensitivities, strict=True)
        return tuple(pure_epsilon(s, d) for s, d in pairs)

    def grid(self) -> np.ndarray:
        return candidates(self.spec)

    def rank_moe_bound(self, alpha: float) -> tuple[float, ...]:
        """Data-free: rank error beyond the best candidate's, per quantile, at 1 − α."""
        size = self.grid().size
        return tuple(s * math.log(size / alpha) for s in self.scales)


def calibrate_quantile(spec: QuantileSpec, share: Share, ctx: StatContext) -> QuantileMechanism:
    """Split the share over the k quantiles and find each one's scale (never over budget)."""
    each = share.split(len(spec.quantiles))
    scales = tuple(_scale_for(each, score_sensitivity(q, ctx)) for q in spec.quantiles)
    sensitivities = [score_sensitivity(q, ctx) for q in spec.quantiles]
    epsilons = [pure_epsilon(s, d) for s, d in zip(scales, sensitivities, strict=True)]
    if not share.fits_pure(epsilons, bounded_range=True):
        raise InternalError("quantile calibration overspends its share")
    cost = share.pure_cost(epsilons, bounded_range=True)
    return QuantileMechanism(spec, ctx, scales, cost)


# --- the distribution on given data (CONFIDENTIAL) ----------------------------------------


def value_errors(values: np.ndarray, grid: np.ndarray, q: Fraction) -> np.ndarray:
    """|c − the true q-quantile| (the smallest value with at least q·n values ≤ it)."""
    if values.size == 0:
        return np.full(grid.size, np.nan)
    truth = float(np.quantile(values, float(q), method="inverted_cdf"))
    errors: np.ndarray = np.abs(grid - truth)
    return errors


def quantile_pmf(values: np.ndarray, grid: np.ndarray, q: Fraction, scale: float) -> np.ndarray:
    """P(c) ∝ exp(u(c)/s): the exact output distribution on these values."""
    logits = -rank_errors(values, grid, q) / scale
    weights = np.exp(logits - logits.max())
    pmf: np.ndarray = weights / weights.sum()
    return pmf


def exact_moe(pmf: np.ndarray, errors: np.ndarray, alpha: float) -> float:
    """Smallest a with P(error ≤ a) ≥ 1 − α under the distribution `pmf`."""
    order = np.argsort(errors, kind="stable")
    cumulative = np.cumsum(pmf[order])
    index = int(np.searchsorted(cumulative, 1 - alpha - 1e-12, side="left"))
    return float(errors[order][min(index, errors.size - 1)])


# --- the draw and its statistic object ---------------------------------------------------


def draw_quantiles(data: StatData, mechanism: QuantileMechanism, noise: StatNoise) -> np.ndarray:
    """Released quantiles, shape (cells, k), each row sorted (post-processing)."""
    grid = mechanism.grid()
    d_in = mechanism.context.symmetric_distance
    draws = [
        noise.quantile(grid, q, s, d_in, zcdp_rho(s, d))
        for q, s, d in zip(
            mechanism.spec.quantiles, mechanism.scales, mechanism.sensitivities, strict=True
        )
    ]
    out = np.empty((data.n_cells, len(draws)), dtype=np.float64)
    for cell, values in enumerate(data.groups()):
        out[cell] = [draw(values) for draw in draws]
    out.sort(axis=1)
    return out


def quantile_names(spec: QuantileSpec) -> tuple[str, ...]:
    """Each quantile as its file and Preview label: 0.5, 0.25, …"""
    return tuple(f"{float(q):g}" for q in spec.quantiles)


class QuantileKind(StatisticKind[QuantileMechanism]):
    """The exponential mechanism over a public grid (the default method of a quantile)."""

    kind = "quantile"
    method = "exponential"
    mechanism_text = (
        "exponential mechanism over a public grid of candidates within the bounds, "
        "utility −|rank − q·n| (OpenDP's make_private_quantile, exact Gumbel noisy max)"
    )
    zcdp_divisor = 8  # bounded range: ρ = ε²/8
    needs_delta = False
    curve_unit = "rank"

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> QuantileMechanism:
        assert isinstance(spec, QuantileSpec)
        return calibrate_quantile(spec, share, ctx)

    def mechanism_name(self, mech: QuantileMechanism) -> str:
        return MECHANISM

    def error(self, mech: QuantileMechanism, confidence: float) -> dict[str, Any]:
        """The rank error beyond the best grid candidate's, s·ln(K/α) (its value error
        depends on the data's density: the Preview shows it, exactly, to the data holder)."""
        return {"moe_rank": list(mech.rank_moe_bound(1 - confidence)), "moe_value": None}

    def sensitivity(self, mech: QuantileMechanism) -> dict[str, float | None]:
        """The score sensitivity Δ (its largest over the quantiles) as `l1`, `l2` null."""
        return {"l1": float(max(mech.sensitivities)), "l2": None}

    def noise_fields(self, mech: QuantileMechanism, cells: int, confidence: float) -> NoiseFields:
        return max(mech.scales), None, None, None

    def draw(self, data: StatData, mech: QuantileMechanism, noise: StatNoise) -> np.ndarray:
        return draw_quantiles(data, mech, noise)

    def preview_error(
        self, data: StatData, mech: QuantileMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """The exact margin in rank and in value, from the output distribution on each cell."""
        grid = mech.grid()
        rows: list[dict[str, float]] = []
        labels = quantile_names(mech.spec)
        for values in data.groups():
            row: dict[str, float] = {}
            for q, scale, label in zip(mech.spec.quantiles, mech.scales, labels, strict=True):
                pmf = quantile_pmf(values, grid, q, scale)
                row[f"±rank q={label}"] = exact_moe(pmf, rank_errors(values, grid, q), alpha)
                row[f"±value q={label}"] = exact_moe(pmf, value_errors(values, grid, q), alpha)
            rows.append(row)
        return rows

    def summary(self, entry: dict[str, Any]) -> str:
        shown = "rank moe " + ", ".join(f"{r:.4g}" for r in entry["error"]["moe_rank"])
        return shown + f", resolution {entry['resolution']:g}"

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        ranks = ", ".join(f"{r:.4g}" for r in error["moe_rank"])
        return (
            f"rank within ±{ranks} of the best grid candidate ({confidence}); its error in value"
            " depends on how dense the data are near the quantile"
        )

    def short_margin(self, error: dict[str, Any]) -> str:
        return "rank ±" + ", ".join(f"{r:.3g}" for r in error["moe_rank"])

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(max(error["moe_rank"] or [0.0]))

    def csv_labels(self, spec: StatSpec) -> tuple[str, ...] | None:
        assert isinstance(spec, QuantileSpec)
        return quantile_names(spec) if len(spec.quantiles) > 1 else None

    def expected_rmse(self, mech: QuantileMechanism, cell_rows: int) -> float:
        """Exactly, on the reference cell: the output law over the grid (its utility counted
        on the evenly spread values), its mean squared distance to the cell's quantile,
        averaged over the cell's shifts across a grid step (`reference.offsets`); the root of
        the mean over the quantiles."""
        spec, grid = mech.spec, mech.grid()
        mses = []
        for shift in offsets(spec.grid_step):
            lo, hi = spec.lo + shift, spec.hi + shift
            below, above = ranks_around(lo, hi, cell_rows, grid)
            for q, scale in zip(spec.quantiles, mech.scales, strict=True):
                logits = -np.abs(float(1 - q) * below - float(q) * above) / scale
                weights = np.exp(logits - logits.max())
                truth = quantile_value(lo, hi, cell_rows, q)
                mses.append(float(weights @ (grid - truth) ** 2 / weights.sum()))
        return math.sqrt(sum(mses) / len(mses))

    def choice(self, spec: StatSpec) -> str:
        return (
            "exponential mechanism over the public grid of the bounds: pure ε, no δ; its error "
            "is in rank, so it does well where the data are dense near the quantile"
        )


QUANTILE = QuantileKind()
