"""Sums of a clamped column per group, and means as noisy sum / noisy count.

Fixed point. Each value is clamped into [lo, hi] and rounded to the nearest multiple of the
resolution r, i.e. to an integer number of units in [L, H] = [⌊lo/r⌋, ⌈hi/r⌉]. The group
sums are then integers, and the noise is drawn on them exactly as on counts (OpenDP's discrete
Laplace or discrete Gaussian on integers, or its Gaussian on floats, which are exact for
integers below 2⁵³), then multiplied by r. Rounding moves each value by at most r/2.

Sensitivity in units, with M = max(|L|, |H|) and m = max_rows (exact oracle in the tests):

| neighbours | by-columns | L1 | L2² |
|---|---|---|---|
| add/remove | any | m·M | m²·M² |
| replace | none | S = max over k, k′ ∈ {1, m} of k′H − kL | S² |
| replace | some | 2·m·M (rows leave one group, join another) | max(2m²M², S²) |

(Add/remove: a unit's m rows add at most m·M to the groups together, and their squares at most
m²M² however they spread. Replace within one group: Σnew − Σold over 1..m rows each is at most
S, which is H − L for rows (m = 1) and m(H − L) when L < 0 < H; across groups each side moves
by at most m·M.)

Noise per accountant: pure, advanced: discrete Laplace b = L1/ε; approx: Gaussian σ from the
analytic calibration at (ε, δ) with L2 rounded up; zcdp: discrete Gaussian σ with L2²/(2σ²) =
ρ. Those are the maps of `dprelease.accounting.mechanisms`, so a sum composes like a table
of counts.

Bias from clamping (known direction): values above hi pull the sum down by Σ(x − hi)₊, values
below lo pull it up by Σ(lo − x)₊. The release cannot state their size (it would need the
data); choose bounds that hold nearly all values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import DataError
from dprelease.plan.stat_spec import StatSpec
from dprelease.plan.summary_spec import SumSpec
from dprelease.plan.table_spec import Sensitivity
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import NoiseFields, StatisticKind
from dprelease.stats.noise import StatNoise

EXACT_FLOAT_LIMIT = 2**53  # Gaussian noise is added to floats: sums must stay exact there


def unit_bounds(spec: SumSpec) -> tuple[int, int]:
    """[L, H] = [⌊lo/r⌋, ⌈hi/r⌉] in resolution units."""
    lo, hi = Fraction(spec.lo) / spec.resolution, Fraction(spec.hi) / spec.resolution
    return math.floor(lo), math.ceil(hi)


def to_units(values: np.ndarray, spec: SumSpec) -> np.ndarray:
    """Clamp into [lo, hi], round to the nearest unit (half to even), as int64 in [L, H]."""
    low, high = unit_bounds(spec)
    clamped = np.clip(values, spec.lo, spec.hi)
    units = np.rint(clamped / float(spec.resolution))
    result: np.ndarray = np.clip(units, low, high).astype(np.int64)
    return result


def sum_sensitivity(spec: SumSpec, ctx: StatContext) -> Sensitivity:
    """L1 and L2² of the vector of group sums, in units (table in the module docstring)."""
    low, high = unit_bounds(spec)
    big, m = max(abs(low), abs(high)), ctx.max_rows
    if ctx.neighbors == "add_remove":
        return Sensitivity(l1=m * big, l2_squared=m * m * big * big)
    # Σnew − Σold within one group, over units of 1..m rows (linear in the row counts).
    span = max(new * high - old * low for new in (1, m) for old in (1, m))
    if not ctx.grouped:
        return Sensitivity(l1=span, l2_squared=span * span)
    return Sensitivity(l1=2 * m * big, l2_squared=max(2 * m * m * big * big, span * span))


def noise_for(share: Share, sens: Sensitivity) -> Noise:
    """The accountant's mechanism calibrated to the share (scales rounded up, checked exactly)."""
    return share.accountant.statistic_noise(share.amount, share.delta, sens)


@dataclass(frozen=True)
class SumMechanism:
    """One sum statistic: fixed point, sensitivity, noise (in units) and what it costs."""

    spec: SumSpec
    context: StatContext
    sensitivity: Sensitivity
    noise: Noise
    cost: Share

    @property
    def value_std(self) -> float:
        """Noise std of a released sum, in the column's own units."""
        return self.noise.std * float(self.spec.resolution)

    def value_moe(self, alpha: float) -> float:
        return self.noise.moe(alpha) * float(self.spec.resolution)


def calibrate_sum(spec: SumSpec, share: Share, ctx: StatContext) -> SumMechanism:
    sens = sum_sensitivity(spec, ctx)
    return SumMechanism(spec, ctx, sens, noise_for(share, sens), share)


def true_unit_sums(data: StatData, spec: SumSpec) -> np.ndarray:
    """CONFIDENTIAL: each group's sum of clamped, rounded values, in units (int64)."""
    cells, values = data.kept()
    units = to_units(values, spec)
    low, high = unit_bounds(spec)
    if max(abs(low), abs(high)) * max(units.size, 1) >= EXACT_FLOAT_LIMIT:
        raise DataError(
            f"The sum of column '{spec.column}' could exceed 2^53 resolution units; "
            "raise `resolution` or narrow the bounds."
        )
    sums: np.ndarray = np.bincount(cells, weights=units, minlength=data.n_cells)
    exact: np.ndarray = np.rint(sums).astype(np.int64)
    return exact


def draw_sums(data: StatData, mechanism: SumMechanism, noise: StatNoise) -> np.ndarray:
    """Noisy group sums in the column's units (secure, or PREVIEW by `noise`)."""
    noisy = noise.counts(
        true_unit_sums(data, mechanism.spec), mechanism.noise, mechanism.sensitivity
    )
    released: np.ndarray = noisy.astype(np.float64) * float(mechanism.spec.resolution)
    return released


class SumKind(StatisticKind[SumMechanism]):
    """A clamped, fixed-point sum with the accountant's noise."""

    kind = "sum"
    method = "clamped"
    mechanism_text = (
        "values clamped into the bounds and rounded to the resolution, then the "
        "accountant's noise on each cell's sum (OpenDP's secure samplers)"
    )

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> SumMechanism:
        assert isinstance(spec, SumSpec)
        return calibrate_sum(spec, share, ctx)

    def mechanism_name(self, mech: SumMechanism) -> str:
        return mech.noise.mechanism

    def error(self, mech: SumMechanism, confidence: float) -> dict[str, Any]:
        """The noise's margin in the column's units."""
        return {"moe": mech.value_moe(1 - confidence), "noise_std": mech.value_std}

    def value_moe(
        self, mech: SumMechanism, values: np.ndarray, confidence: float
    ) -> np.ndarray | None:
        """The noise's margin, the same for every cell (metadata's `error.moe`)."""
        return np.full(values.shape, mech.value_moe(1 - confidence))

    def sensitivity(self, mech: SumMechanism) -> dict[str, float | None]:
        """L1 and L2 in the column's units."""
        unit = float(mech.spec.resolution)
        return {"l1": mech.sensitivity.l1 * unit, "l2": mech.sensitivity.l2 * unit}

    def noise_fields(self, mech: SumMechanism, cells: int, confidence: float) -> NoiseFields:
        unit = float(mech.spec.resolution)
        moe_table = mech.noise.moe_table(1 - confidence, max(cells, 1)) * unit
        return mech.noise.scale * unit, mech.value_std, mech.value_moe(1 - confidence), moe_table

    def draw(self, data: StatData, mech: SumMechanism, noise: StatNoise) -> np.ndarray:
        return draw_sums(data, mech, noise)

    def preview_error(
        self, data: StatData, mech: SumMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """The noise's margin (data-free), per cell."""
        return [{"±": mech.value_moe(alpha)} for _ in range(data.n_cells)]

    def summary(self, entry: dict[str, Any]) -> str:
        return f"moe {entry['error']['moe']:.4g}"

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        return f"±{fmt(error['moe'])} per cell ({confidence}), noise std {fmt(error['noise_std'])}"

    def short_margin(self, error: dict[str, Any]) -> str:
        return f"±{error['moe']:.4g}"

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(error["moe"])


def fmt(value: float | None) -> str:
    """A number in the report: 4 significant digits, — for none."""
    return "—" if value is None else f"{value:.4g}"


SUM = SumKind()
