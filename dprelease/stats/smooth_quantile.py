"""Quantiles without clamping bounds: smooth sensitivity (Nissim, Raskhodnikova & Smith 2007).

The q-quantile of a cell's n values is the order statistic f(D) = x_(r), r = max(1, ⌈q·n⌉),
of the values sorted and padded: x_(i) = lo for i ≤ 0 and hi for i ≥ n + 1, where [lo, hi]
is the public range (the plan's `bounds`, or ±1e15: only the padding needs it, and it enters
the noise only through terms that decay like e^{−β·n/2}).

The smooth bound S (a β-smooth upper bound on the local sensitivity of a unit of d rows, d = m
under add/remove, 2m under replace, m = max_rows), its proof and its exact computation are
`smooth_bound`'s: since issue 38.3 NRS's textbook S*(x) = max_k e^{−kβ}·max_{t=0..k+1}(x_{r+t} −
x_{r+t−k−1}) for d = 1 (windows of (k + 1)·d places holding r), 1.5–2.1× below the bound used
before on cells of 100,000 rows and more, 1.4–62× on cells of 600–2,400 rows; the noise below
needs only S(D) ≥ LS(D) and S(D) ≤ e^β S(D′).

Noise (NRS Lemma 2.7, "admissible" distributions; the notes' seed 002 states the Laplace case
as "Lap(S/ε) is 2ε-DP", which holds only with a δ: we use the lemma's constants):

- pure ε (pure, advanced; zcdp through ε = √(2ρ), since ε-DP implies ε²/2-zCDP): Cauchy,
  f(D) + (S/a)·Z with density 1/(π(1 + z²)), a = ε/8 and β = ε/6 (the smaller of both
  constants the paper gives for γ = 2: (ε/(4γ), ε/γ) and (ε/(2(γ+1)), ε/(2(γ+1))); a smaller
  a or β only adds noise);
- (ε, δ) (approx): Laplace, f(D) + (S/a)·Z with density ½e^{−|z|}, a = ε/2 and
  β = ln(1 + ε/(2 ln(1/δ))), proven at every ε (issue 35: the lemma's β = ε/(2 ln(2/δ)) holds
  for ε < 1 only; at ε = 20 a neighbour pair reached δ = 1.95e-6 for a claimed 1e-6). Proof:
  for neighbours D, D′ write S = S(D), S′ = S(D′), λ = S/S′ ∈ [e^{−β}, e^β], and
  |f(D) − f(D′)| ≤ min(S, S′) (both bound the local sensitivity). With y = f(D) + (S/a)z the
  privacy loss is ln(S′/S) − |z| + a|y − f(D′)|/S′ ≤ −ln λ + (λ − 1)|z| + a, which is at most
  a + β ≤ ε when λ < 1 and at most a + (e^β − 1)|z| otherwise; so it exceeds ε only when
  |z| > (ε − a)/(e^β − 1) = ln(1/δ), with probability δ (the same for D′ against D).

Cells: a unit's rows fall in at most t cells (t = 1 without by-columns; with them t = m under
add/remove, 2m under replace, where a unit leaves one cell and joins another); smooth
sensitivity does not shrink with fewer rows changed, so each cell gets ε/t (and δ/t). k
quantiles split the share equally (basic composition) and are sorted afterwards.

Release: the noisy value is clamped into [lo, hi] and rounded to the `resolution` (else 6
significant digits): post-processing, which also drops the low bits of the float noise.
Margins: |noise| ≤ (S/a)·z_{1−α/2} with probability 1 − α (z the standard law's quantile):
data-free, the margin is stated per unit of S (S depends on the data and is not released);
the Preview shows each cell's margin from its own S (CONFIDENTIAL, for the data holder).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.accounting.composition import round_down, round_up
from dprelease.errors import BudgetError, InternalError
from dprelease.plan.stat_spec import RobustSpec, StatSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import NoiseFields, StatisticKind
from dprelease.stats.noise import StatNoise, UnitLaw
from dprelease.stats.reference import clamped_noise_mse, quantile_value
from dprelease.stats.smooth_bound import (
    evenly_spread_bound,
    order_statistic,
    padded,
    rank,
    smooth_sensitivity,
)

__all__ = ["SMOOTH_QUANTILE", "order_statistic", "padded", "rank", "smooth_sensitivity"]

CAUCHY_A, CAUCHY_B = Fraction(1, 8), Fraction(1, 6)  # a = ε/8, β = ε/6 (pure ε)
SIGNIFICANT = 6  # digits a value keeps when the plan gives no resolution


def unit_quantile(law: UnitLaw, p: float) -> float:
    """z with P(|Z| ≤ z) = p for the standard law."""
    if law == "cauchy":
        return math.tan(math.pi * p / 2)
    return -math.log(1 - p)


@dataclass(frozen=True)
class SmoothParameters:
    """One order statistic's noise: the law, a (noise = S/a · Z) and β per unit, all public."""

    law: UnitLaw
    a: float
    beta: float
    steps: int  # d: rows one unit moves in one cell (in the aggregated values for a mean)


def laplace_constants(epsilon: Fraction, delta: Fraction) -> tuple[float, float]:
    """(a, β) for Laplace noise at (ε, δ), valid at any ε > 0 and δ < 1/e (module docstring):
    a = ε/2, β = ln(1 + ε/(2 ln(1/δ))), both rounded down (smaller only adds noise)."""
    log_term = math.log(1 / float(delta)) * (1 + 1e-12)  # rounded up
    beta = math.log1p(float(epsilon) / 2 / log_term) * (1 - 1e-12)  # rounded down
    return round_down(epsilon / 2), round_down(Fraction(beta))


def calibrate_parameters(
    share: Share, ctx: StatContext, parts: int, steps_per_row: int = 1
) -> tuple[SmoothParameters, Share]:
    """Each of `parts` order statistics' parameters, and the exact cost of all of them."""
    each = share.split(parts)
    cells = ctx.symmetric_distance if ctx.grouped else 1  # cells one unit can touch
    steps = steps_per_row * ctx.symmetric_distance
    if each.accountant.splits_delta and each.delta:  # (ε, δ): Laplace noise
        eps, cell_delta = Fraction(each.epsilon or 0) / cells, Fraction(each.delta) / cells
        a, beta = laplace_constants(eps, cell_delta)
        params = SmoothParameters("laplace", a, beta, steps)
        spent = parts * cell_delta * cells
        cost = Share(each.accounting, epsilon=round_up(parts * eps * cells), delta=round_up(spent))
    else:
        epsilon = each.pure_epsilon()  # in any unit: ε-DP ⇒ ε²/2-zCDP under ρ
        eps = Fraction(epsilon) / cells
        params = SmoothParameters("cauchy", round_down(eps * CAUCHY_A), round_down(eps * CAUCHY_B),
                                  steps)  # fmt: skip
        cost = each.pure_cost([Fraction(epsilon)] * parts)
    if not (params.a > 0 and params.beta > 0):
        raise BudgetError("The budget is too small for a smooth-sensitivity statistic.")
    if cost.amount > share.amount or (cost.delta or 0.0) > (share.delta or 0.0):
        raise InternalError("smooth-sensitivity calibration overspends its share")
    return params, cost


def noisy_quantile(
    values: np.ndarray, q: Fraction, params: SmoothParameters, spec: RobustSpec, z: float
) -> float:
    """f(D) + (S(D)/a)·z, before clamping and rounding (the audited mechanism)."""
    x = padded(values, spec.lo, spec.hi)
    value, r = order_statistic(x, q)
    return value + smooth_sensitivity(x, r, params.beta, params.steps) / params.a * z


def finish(values: np.ndarray, spec: RobustSpec) -> np.ndarray:
    """Post-processing: clamp into [lo, hi], round to the resolution (else 6 digits)."""
    clamped = np.clip(values, spec.lo, spec.hi)
    if spec.resolution:
        rounded: np.ndarray = np.round(clamped / spec.resolution) * spec.resolution
        return rounded
    return np.array([float(f"{v:.{SIGNIFICANT}g}") for v in clamped.ravel()]).reshape(clamped.shape)


@dataclass(frozen=True)
class SmoothMechanism:
    """A quantile statistic by smooth sensitivity: its parameters and cost (public)."""

    spec: RobustSpec
    context: StatContext
    params: SmoothParameters
    cost: Share


def calibrate_smooth_quantile(spec: RobustSpec, share: Share, ctx: StatContext) -> SmoothMechanism:
    params, cost = calibrate_parameters(share, ctx, len(spec.quantiles))
    return SmoothMechanism(spec, ctx, params, cost)


def draw_smooth_quantiles(data: StatData, mech: SmoothMechanism, noise: StatNoise) -> np.ndarray:
    """Released quantiles, shape (cells, k), each row sorted, clamped and rounded."""
    k = len(mech.spec.quantiles)
    out = np.empty((data.n_cells, k), dtype=np.float64)
    for cell, values in enumerate(data.groups()):
        z = noise.unit_noise(mech.params.law, k)
        out[cell] = [
            noisy_quantile(values, q, mech.params, mech.spec, float(zq))
            for q, zq in zip(mech.spec.quantiles, z, strict=True)
        ]
    out.sort(axis=1)
    return finish(out, mech.spec)


def smooth_error(params: SmoothParameters, confidence: float) -> dict[str, Any]:
    """Data-free: the noise's margin per unit of smooth sensitivity, and its law."""
    return {
        "moe_per_smooth_sensitivity": unit_quantile(params.law, confidence) / params.a,
        "noise": params.law,
        "beta": params.beta,
    }


def smooth_error_text(error: dict[str, Any], confidence: str) -> str:
    return (
        f"value ± {error['moe_per_smooth_sensitivity']:.4g} × S ({confidence}; {error['noise']} "
        f"noise), where S is the cell's {error['beta']:.3g}-smooth sensitivity: it depends on "
        "the data and is not released (small where values are dense around the quantile)"
    )


class SmoothQuantileKind(StatisticKind[SmoothMechanism]):
    """A quantile by smooth sensitivity (`method: smooth_sensitivity`)."""

    kind = "quantile"
    method = "smooth_sensitivity"
    mechanism_text = (
        "smooth sensitivity (Nissim–Raskhodnikova–Smith): the order statistic plus noise "
        "scaled to its β-smooth local sensitivity (Cauchy for pure ε, Laplace for (ε, δ)); "
        "no clamping bounds"
    )
    curve_unit = "smooth sensitivity"

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> SmoothMechanism:
        assert isinstance(spec, RobustSpec)
        return calibrate_smooth_quantile(spec, share, ctx)

    def mechanism_name(self, mech: SmoothMechanism) -> str:
        return f"smooth_sensitivity_{mech.params.law}"

    def error(self, mech: SmoothMechanism, confidence: float) -> dict[str, Any]:
        return smooth_error(mech.params, confidence)

    def sensitivity(self, mech: SmoothMechanism) -> dict[str, float | None]:
        return {"l1": None, "l2": None}  # data-dependent (smooth): not a public number

    def noise_fields(self, mech: SmoothMechanism, cells: int, confidence: float) -> NoiseFields:
        return None, None, None, None

    def draw(self, data: StatData, mech: SmoothMechanism, noise: StatNoise) -> np.ndarray:
        return draw_smooth_quantiles(data, mech, noise)

    def preview_error(
        self, data: StatData, mech: SmoothMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """Each cell's margin from its own S (CONFIDENTIAL: the data holder's only)."""
        per_s = smooth_error(mech.params, 1 - alpha)["moe_per_smooth_sensitivity"]
        rows = []
        for values in data.groups():
            x = padded(values, mech.spec.lo, mech.spec.hi)
            row = {}
            for q in mech.spec.quantiles:
                _, r = order_statistic(x, q)
                s = smooth_sensitivity(x, r, mech.params.beta, mech.params.steps)
                row[f"±value q={float(q):g}"] = per_s * s
            rows.append(row)
        return rows

    def summary(self, entry: dict[str, Any]) -> str:
        error = entry["error"]
        return f"moe {error['moe_per_smooth_sensitivity']:.4g} × smooth sensitivity"

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        return smooth_error_text(error, confidence)

    def short_margin(self, error: dict[str, Any]) -> str:
        return f"±{error['moe_per_smooth_sensitivity']:.4g} × S (data-dependent)"

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(error["moe_per_smooth_sensitivity"])

    def csv_labels(self, spec: StatSpec) -> tuple[str, ...] | None:
        assert isinstance(spec, RobustSpec)
        if len(spec.quantiles) == 1:
            return None
        return tuple(f"{float(q):g}" for q in spec.quantiles)

    def expected_rmse(self, mech: SmoothMechanism, cell_rows: int) -> float:
        """On the reference cell: its smooth sensitivity in closed form (`evenly_spread_bound`),
        the noise's mean square with the release's clamp into the bounds (`clamped_noise_mse`,
        finite for Cauchy noise only through that clamp), plus the rounding's r²/12."""
        spec, params = mech.spec, mech.params
        spacing = (spec.hi - spec.lo) / cell_rows
        scale = evenly_spread_bound(cell_rows, spacing, params.beta, params.steps) / params.a
        rounding = (spec.resolution or 0.0) ** 2 / 12
        mses = []
        for q in spec.quantiles:
            truth = quantile_value(spec.lo, spec.hi, cell_rows, q)
            noise = clamped_noise_mse(params.law, scale, truth - spec.lo, spec.hi - truth)
            mses.append(noise + rounding)
        return math.sqrt(sum(mses) / len(mses))

    def choice(self, spec: StatSpec) -> str:
        return (
            "smooth sensitivity: no bounds to guess, no clamping bias; the noise follows how "
            "spread the data are around the quantile (small for many rows, dense around it). "
            "With few rows per cell give a wide public range (bounds): without one the "
            "noise can reach ±1e15; Cauchy noise (pure ε, zcdp) has heavy tails"
        )


SMOOTH_QUANTILE = SmoothQuantileKind()
