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

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.table_spec import Sensitivity, Unit, sensitivity
from dprelease.release.noise import preview_noise, secure_noisy_counts
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.spec import MeanSpec
from dprelease.stats.sums import SumMechanism, calibrate_sum, noise_for, true_unit_sums


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


def release_means(data: StatData, mechanism: MeanMechanism) -> np.ndarray:
    """Released means per group: secure noisy sum over secure noisy count."""
    total, sens = mechanism.total, mechanism.total.sensitivity
    sums = secure_noisy_counts(
        true_unit_sums(data, total.spec), total.noise, sens.l1, sens.l2_squared
    )
    csens = mechanism.count_sensitivity
    counts = secure_noisy_counts(
        true_counts(data), mechanism.count_noise, csens.l1, csens.l2_squared
    )
    return combine(sums * float(total.spec.resolution), counts, mechanism.spec)


def preview_means(data: StatData, mechanism: MeanMechanism, rng: np.random.Generator) -> np.ndarray:
    """PREVIEW only (numpy noise)."""
    sums = true_unit_sums(data, mechanism.total.spec)
    counts = true_counts(data)
    noisy_sums = (sums + preview_noise(mechanism.total.noise, sums.size, rng)) * float(
        mechanism.total.spec.resolution
    )
    noisy_counts = counts + preview_noise(mechanism.count_noise, counts.size, rng)
    return combine(noisy_sums, noisy_counts, mechanism.spec)


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
    errors = np.stack([preview_means(data, mechanism, rng) - truth for _ in range(draws)])
    return MeanError(np.sqrt((errors**2).mean(axis=0)), errors.mean(axis=0), draws)
