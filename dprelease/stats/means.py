"""Means as post-processing: a noisy sum over a noisy count of the same rows.

The share is split: `sum_share` to the sum (see `sums`), the rest to the count (sensitivity m
under add/remove, 2m under replace: the counts' own, `dprelease.plan.table_spec.sensitivity`). Both
are drawn with the accountant's mechanism, then

    mean = clamp(S̃ / max(Ñ, 1), lo, hi)

costs nothing more (post-processing). Error (delta method, first order), for a group of n
rows with mean μ:  Var(mean) ≈ (σ_S² + μ²·σ_N²) / n², where σ_S and σ_N are the noise std of
the sum (in the column's units) and of the count. It grows as 1/n²: small groups get
unreliable means, and the ratio's own bias (E[1/Ñ] > 1/n) and the clamp of the result matter
there; `simulate_mean_error` measures both. Clamping the values biases the mean towards the
inside of the bounds (the direction is known, the size is not; see `sums`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.stat_spec import StatSpec
from dprelease.plan.summary_spec import MeanSpec
from dprelease.plan.table_spec import Sensitivity, Unit, sensitivity
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import StatisticKind
from dprelease.stats.noise import PreviewNoise, StatNoise
from dprelease.stats.sums import (
    SumMechanism,
    calibrate_sum,
    fmt,
    noise_for,
    true_unit_sums,
)


@dataclass(frozen=True)
class MeanMechanism:
    spec: MeanSpec
    total: SumMechanism
    count_sensitivity: Sensitivity
    count_noise: Noise
    cost: Share  # the whole share: the sum's part and the count's part together

    def rmse(self, n: float, mean: float) -> float:
        """Delta-method RMSE of the released mean for a group of n rows with this mean."""
        variance = self.total.value_std**2 + mean**2 * self.count_noise.variance
        return math.sqrt(variance) / max(n, 1.0)


def count_sensitivity(ctx: StatContext) -> Sensitivity:
    unit = Unit("row") if ctx.max_rows == 1 else Unit("id", "id", ctx.max_rows)
    return sensitivity(unit, ctx.neighbors)


def calibrate_mean(spec: MeanSpec, share: Share, ctx: StatContext) -> MeanMechanism:
    """`sum_share` of the share to the sum, the rest to the count (both rounded down)."""
    total = calibrate_sum(spec.total, share.scaled(spec.sum_share), ctx)
    sens = count_sensitivity(ctx)
    noise = noise_for(share.scaled(1 - spec.sum_share), sens)
    return MeanMechanism(spec, total, sens, noise, share)


def true_counts(data: StatData) -> np.ndarray:
    """CONFIDENTIAL: rows with a value, per group."""
    cells, _ = data.kept()
    counts: np.ndarray = np.bincount(cells, minlength=data.n_cells).astype(np.int64)
    return counts


def combine(noisy_sums: np.ndarray, noisy_counts: np.ndarray, spec: MeanSpec) -> np.ndarray:
    """Post-processing: S̃ / max(Ñ, 1), clamped into the bounds."""
    ratio = noisy_sums / np.maximum(noisy_counts.astype(np.float64), 1.0)
    means: np.ndarray = np.clip(ratio, spec.total.lo, spec.total.hi)
    return means


def draw_means(data: StatData, mechanism: MeanMechanism, noise: StatNoise) -> np.ndarray:
    """Released means per group: noisy sum over noisy count (secure, or PREVIEW by `noise`)."""
    return combine(*_noisy_parts(data, mechanism, noise), mechanism.spec)


def _noisy_parts(
    data: StatData, mechanism: MeanMechanism, noise: StatNoise
) -> tuple[np.ndarray, np.ndarray]:
    """The noisy sums (in the column's units) and the noisy counts of the groups."""
    total = mechanism.total
    sums = noise.counts(true_unit_sums(data, total.spec), total.noise, total.sensitivity)
    counts = noise.counts(true_counts(data), mechanism.count_noise, mechanism.count_sensitivity)
    return sums * float(total.spec.resolution), counts


def mean_moe(
    noisy_sums: np.ndarray,
    noisy_counts: np.ndarray,
    mechanism: MeanMechanism,
    confidence: float,
) -> np.ndarray:
    """Each released mean's margin at `confidence`, from the noisy sum and count alone (a
    post-processing of released figures; no true value). Each part's own margin at half the
    miss rate (so that both hold together at `confidence`) bounds the true sum S and count N;
    the clamped mean S/N then lies within the corners of those intervals (and the bounds), and
    the margin is the farther of them from the released mean. A count whose interval reaches
    below 1 bounds nothing: the margin is then the distance to the farther bound."""
    alpha = (1 - confidence) / 2
    lo, hi = float(mechanism.spec.total.lo), float(mechanism.spec.total.hi)
    a = mechanism.total.value_moe(alpha)
    b = mechanism.count_noise.moe(alpha)
    released = combine(noisy_sums, noisy_counts, mechanism.spec)
    counts = noisy_counts.astype(np.float64)
    low_n, high_n = counts - b, counts + b
    usable = low_n >= 1
    safe_low = np.where(usable, low_n, 1.0)
    corners = np.stack(
        [(noisy_sums - a) / safe_low, (noisy_sums - a) / high_n,
         (noisy_sums + a) / safe_low, (noisy_sums + a) / high_n]
    )  # fmt: skip
    lowest = np.where(usable, np.clip(corners.min(axis=0), lo, hi), lo)
    highest = np.where(usable, np.clip(corners.max(axis=0), lo, hi), hi)
    moe: np.ndarray = np.maximum(released - lowest, highest - released)
    return moe


@dataclass(frozen=True)
class MeanError:
    """Per group: simulated RMSE and bias of the released mean against the clamped mean."""

    rmse: np.ndarray
    bias: np.ndarray
    draws: int


def simulate_mean_error(
    data: StatData, mechanism: MeanMechanism, rng: np.random.Generator, draws: int = 200
) -> MeanError:
    """CONFIDENTIAL (uses the data): error of the released mean by simulation (preview noise)."""
    counts = true_counts(data)
    sums = true_unit_sums(data, mechanism.total.spec) * float(mechanism.total.spec.resolution)
    truth = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    noise = PreviewNoise(rng)
    errors = np.stack([draw_means(data, mechanism, noise) - truth for _ in range(draws)])
    return MeanError(np.sqrt((errors**2).mean(axis=0)), errors.mean(axis=0), draws)


class MeanKind(StatisticKind[MeanMechanism]):
    """Noisy clamped sum over noisy count (the default method of a mean)."""

    kind = "mean"
    method = "clamped"
    mechanism_text = (
        "noisy sum of the clamped values over a noisy count (post-processing), each with "
        "the accountant's noise (OpenDP's secure samplers)"
    )

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> MeanMechanism:
        assert isinstance(spec, MeanSpec)
        return calibrate_mean(spec, share, ctx)

    def mechanism_name(self, mech: MeanMechanism) -> str:
        return mech.total.noise.mechanism

    def error(self, mech: MeanMechanism, confidence: float) -> dict[str, Any]:
        """The margins of its sum and count; the mean's error ≈ √(σ_S² + μ²σ_N²)/n shrinks
        with the group's n rows."""
        alpha = 1 - confidence
        return {
            "sum_moe": mech.total.value_moe(alpha),
            "count_moe": mech.count_noise.moe(alpha),
            "sum_noise_std": mech.total.value_std,
            "count_noise_std": mech.count_noise.std,
        }

    def sensitivity(self, mech: MeanMechanism) -> dict[str, float | None]:
        """L1 and L2 of its sum part, in the column's units."""
        unit = float(mech.total.spec.resolution)
        sens = mech.total.sensitivity
        return {"l1": sens.l1 * unit, "l2": sens.l2 * unit}

    def draw(self, data: StatData, mech: MeanMechanism, noise: StatNoise) -> np.ndarray:
        return draw_means(data, mech, noise)

    def draw_with_moe(
        self, data: StatData, mech: MeanMechanism, noise: StatNoise, confidence: float
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The means and their margins from the same noisy sums and counts (drawn once)."""
        sums, counts = _noisy_parts(data, mech, noise)
        return combine(sums, counts, mech.spec), mean_moe(sums, counts, mech, confidence)

    def preview_error(
        self, data: StatData, mech: MeanMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """RMSE and bias by simulation (preview noise)."""
        error = simulate_mean_error(data, mech, rng, draws=100)
        pairs = zip(error.rmse.tolist(), error.bias.tolist(), strict=True)
        return [{"RMSE": rmse, "bias": bias} for rmse, bias in pairs]

    def summary(self, entry: dict[str, Any]) -> str:
        error = entry["error"]
        return f"sum moe {error['sum_moe']:.4g}, count moe {error['count_moe']:.4g}"

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        return (
            f"noisy sum ±{fmt(error['sum_moe'])}, noisy count ±{fmt(error['count_moe'])} "
            f"({confidence}); the mean's error ≈ √(σ_S² + mean²·σ_N²)/n shrinks with the "
            f"group's size (σ_S = {fmt(error['sum_noise_std'])}, σ_N = "
            f"{fmt(error['count_noise_std'])})"
        )

    def short_margin(self, error: dict[str, Any]) -> str:
        return f"sum ±{error['sum_moe']:.4g}, count ±{error['count_moe']:.3g}"

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(error["sum_moe"])

    def expected_rmse(self, mech: MeanMechanism, cell_rows: int) -> float:
        """On the reference cell (mean (lo + hi)/2): the delta method's √(σ_S² + μ²σ_N²)/n,
        at most (hi − lo)/2 (the released mean is clamped into the bounds)."""
        lo, hi = mech.spec.total.lo, mech.spec.total.hi
        return min(mech.rmse(cell_rows, (lo + hi) / 2), (hi - lo) / 2)

    def choice(self, spec: StatSpec) -> str:
        return (
            "noisy clamped sum over a noisy count: the bounds clamp every value, which biases "
            "the mean towards the inside of the bounds when values lie outside them"
        )


MEAN = MeanKind()
