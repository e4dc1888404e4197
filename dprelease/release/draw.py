"""The one place where true counts meet noise.

`draw_release` adds fresh noise from OpenDP's secure sampler to every table, once, and
returns a `Release`: noisy measurements and post-processed counts, no true count, no seed.
`draw_preview` does the same with numpy's fast sampler for the data holder's eyes; a
`Preview` keeps the true counts beside the noisy ones for comparison, and export refuses it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dprelease.accounting.allocation import Allocation, TableBudget, allocate
from dprelease.data.count import TrueCounts
from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.postprocess.accuracy import (
    DEFAULT_SIMULATIONS,
    TableAccuracy,
    accuracy_after_postprocessing,
)
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from dprelease.postprocess.pipeline import postprocess
from dprelease.release.noise import preview_noise, secure_noisy_counts


@dataclass(frozen=True)
class NoisyTable:
    """One released table: raw noisy measurements and the counts after post-processing."""

    budget: TableBudget
    noisy_counts: np.ndarray
    released_counts: np.ndarray

    @property
    def name(self) -> str:
        return self.budget.name


@dataclass(frozen=True)
class NoisyMeasurement:
    """One measured marginal and its raw noisy counts (what `measurements/` holds)."""

    budget: TableBudget
    noisy_counts: np.ndarray

    @property
    def name(self) -> str:
        return self.budget.name


@dataclass(frozen=True)
class Release:
    """A differentially private release, safe to export: it holds no true count and no seed."""

    plan: Plan
    allocation: Allocation
    tables: tuple[NoisyTable, ...]
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]
    created: str
    # simulated from the measurements only (safe to publish); empty when not computed
    accuracy: dict[str, TableAccuracy] = field(default_factory=dict)
    measurements: tuple[NoisyMeasurement, ...] = ()

    def table(self, name: str) -> NoisyTable:
        return next(t for t in self.tables if t.name == name)


@dataclass(frozen=True)
class Preview:
    """A PREVIEW for the data holder only: noisy next to true counts. Never exported."""

    plan: Plan
    allocation: Allocation
    tables: tuple[NoisyTable, ...]
    true_counts: TrueCounts
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]
    # filled only when draw_preview is asked for simulations (it costs seconds)
    accuracy: dict[str, TableAccuracy] = field(default_factory=dict)
    measurements: tuple[NoisyMeasurement, ...] = ()


def _check_counts(plan: Plan, true_counts: TrueCounts) -> None:
    for spec in plan.tables:
        counts = true_counts.counts.get(spec.name)
        if counts is None or counts.shape != (spec.cells(plan.schema),):
            raise InternalError(f"true counts of table '{spec.name}' do not match the plan")


@dataclass(frozen=True)
class _Drawn:
    tables: tuple[NoisyTable, ...]
    measurements: tuple[NoisyMeasurement, ...]
    applied: tuple[str, ...]
    skipped: tuple[str, ...]


def _noisy_tables(
    plan: Plan,
    allocation: Allocation,
    true_counts: TrueCounts,
    add_noise: Callable[[np.ndarray, TableBudget], np.ndarray],
) -> _Drawn:
    """Noise on every measurement once, then the published tables from them."""
    _check_counts(plan, true_counts)
    if allocation.derived:
        measurement_set = MeasurementSet(plan, allocation)
        truths = measurement_set.true_measurements(true_counts.counts)
        noisy = {m.name: add_noise(truths[m.name], m) for m in allocation.measurements}
        raw = measurement_set.estimate(noisy)
        result = derived_postprocess(plan, allocation, raw)
    else:
        noisy = {t.name: add_noise(true_counts.counts[t.name], t) for t in allocation.tables}
        raw = noisy
        result = postprocess(plan, allocation, noisy)
    tables = tuple(
        NoisyTable(
            budget=t, noisy_counts=raw[t.name], released_counts=result.released_counts[t.name]
        )
        for t in allocation.tables
    )
    measurements = tuple(NoisyMeasurement(m, noisy[m.name]) for m in allocation.measurements)
    return _Drawn(tables, measurements, result.steps_applied, result.steps_skipped)


def _accuracy(
    drawn: _Drawn, plan: Plan, allocation: Allocation, simulations: int
) -> dict[str, TableAccuracy]:
    if simulations <= 0:
        return {}
    noisy = {m.name: m.noisy_counts for m in drawn.measurements}
    return accuracy_after_postprocessing(plan, allocation, noisy, simulations=simulations)


def draw_release(
    plan: Plan,
    true_counts: TrueCounts,
    allocation: Allocation | None = None,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
) -> Release:
    """Draw the release: fresh secure noise for every table, then post-processing.

    `simulations` (0 to skip) estimates the accuracy after post-processing from the noisy
    measurements only (see `dprelease.postprocess.accuracy`).
    """
    allocation = allocation or allocate(plan)

    def secure(counts: np.ndarray, table: TableBudget) -> np.ndarray:
        sens = table.sensitivity
        return secure_noisy_counts(counts, table.noise, sens.l1, sens.l2_squared)

    drawn = _noisy_tables(plan, allocation, true_counts, secure)
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    accuracy = _accuracy(drawn, plan, allocation, simulations)
    return Release(
        plan,
        allocation,
        drawn.tables,
        drawn.applied,
        drawn.skipped,
        created,
        accuracy=accuracy,
        measurements=drawn.measurements,
    )


def draw_preview(
    plan: Plan,
    true_counts: TrueCounts,
    allocation: Allocation | None = None,
    rng: np.random.Generator | None = None,
    *,
    simulations: int = 0,
) -> Preview:
    """A fast preview with numpy's sampler, for the data holder only.

    With `simulations` > 0 it also estimates the accuracy after post-processing (seconds).
    """
    allocation = allocation or allocate(plan)
    generator = rng or np.random.default_rng()

    def fast(counts: np.ndarray, table: TableBudget) -> np.ndarray:
        noisy: np.ndarray = counts + preview_noise(table.noise, counts.size, generator)
        return noisy

    drawn = _noisy_tables(plan, allocation, true_counts, fast)
    accuracy = _accuracy(drawn, plan, allocation, simulations)
    return Preview(
        plan,
        allocation,
        drawn.tables,
        true_counts,
        drawn.applied,
        drawn.skipped,
        accuracy,
        measurements=drawn.measurements,
    )
