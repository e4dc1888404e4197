"""The one place where true counts meet noise.

`draw_release` adds fresh noise from OpenDP's secure sampler to every table, once, and
returns a `Release`: noisy measurements and post-processed counts, no true count, no seed.
`draw_preview` does the same with numpy's fast sampler for the data holder's eyes; a
`Preview` keeps the true counts beside the noisy ones for comparison, and export refuses it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from dprelease.accounting.allocation import Allocation, TableBudget
from dprelease.accounting.counted import zero_tables
from dprelease.data.count import TrueCounts
from dprelease.errors import DataError, InternalError, ReleaseError
from dprelease.limits import MAX_SYNTHETIC_ROWS
from dprelease.plan.model import Plan
from dprelease.plan.subtables import determines
from dprelease.plan.table_spec import TableSpec
from dprelease.plan.zeros import MASK_LIMIT, zero_mask
from dprelease.postprocess.accuracy import (
    DEFAULT_SIMULATIONS,
    TableAccuracy,
    accuracy_after_postprocessing,
    simulations_within,
)
from dprelease.postprocess.consistency import is_consistent
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from dprelease.postprocess.pipeline import postprocess, problem_of
from dprelease.release.noise import build_samplers, preview_noise, secure_noisy_counts
from dprelease.release.statistics import (
    Counter,
    EmptyTable,
    ReleasedStatistic,
    complete_plan,
    draw_statistics,
    preview_errors,
)
from dprelease.release.synthesis_noise import SECURE_SYNTHESIS
from dprelease.stats.allocation import PlanAllocation, plan_allocation
from dprelease.stats.registry import DiscoveredDomain
from dprelease.stats.source import StatSource
from dprelease.synthetic.junction import check_model
from dprelease.synthetic.measure import PreviewSynthesisNoise, SynthesisNoise
from dprelease.synthetic.microdata import (
    Microdata,
    model_tabulations,
    synthesize,
    synthesize_with_share,
)


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
class InvariantTable:
    """A table the plan holds invariant (issue 27): its EXACT counts, published as they are,
    outside the DP guarantee, by the user's explicit choice (`invariant: true`). The one
    kind of true count a release may hold; no noise, no budget."""

    spec: TableSpec
    released_counts: np.ndarray

    @property
    def name(self) -> str:
        return self.spec.name


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
    allocation: PlanAllocation
    tables: tuple[NoisyTable, ...]
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]
    created: str
    # simulated from the measurements only (safe to publish); empty when not computed
    accuracy: dict[str, TableAccuracy] = field(default_factory=dict)
    measurements: tuple[NoisyMeasurement, ...] = ()
    # issue 16: noisy statistics and the released (discovered) domains
    statistics: tuple[ReleasedStatistic, ...] = ()
    discovered: Mapping[str, DiscoveredDomain] = field(default_factory=dict)
    empty_tables: tuple[EmptyTable, ...] = ()  # over a discovered domain that found nothing
    invariants: tuple[InvariantTable, ...] = ()  # exact by the plan's choice (issue 27)
    microdata: Microdata | None = None  # issue 27: the tables are its tabulations

    def table(self, name: str) -> NoisyTable:
        return next(t for t in self.tables if t.name == name)


@dataclass(frozen=True)
class Preview:
    """A PREVIEW for the data holder only: noisy next to true counts. Never exported."""

    plan: Plan
    allocation: PlanAllocation
    tables: tuple[NoisyTable, ...]
    true_counts: TrueCounts
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]
    # filled only when draw_preview is asked for simulations (it costs seconds)
    accuracy: dict[str, TableAccuracy] = field(default_factory=dict)
    measurements: tuple[NoisyMeasurement, ...] = ()
    statistics: tuple[ReleasedStatistic, ...] = ()  # PREVIEW noise (numpy), issue 16
    discovered: Mapping[str, DiscoveredDomain] = field(default_factory=dict)
    # CONFIDENTIAL: each statistic's error per cell, read from the data (preview_errors)
    statistic_errors: Mapping[str, list[dict[str, float]]] = field(default_factory=dict)
    invariants: tuple[InvariantTable, ...] = ()  # exact by the plan's choice (issue 27)
    microdata: Microdata | None = None  # issue 27 (from the preview's noisy tables)


def _check_counts(plan: Plan, true_counts: TrueCounts) -> None:
    for spec in (*plan.tables, *plan.invariants):
        counts = true_counts.counts.get(spec.name)
        if counts is None or counts.shape != (spec.cells(plan.schema),):
            raise InternalError(f"true counts of table '{spec.name}' do not match the plan")


def _check_synthetic(plan: Plan, true_counts: TrueCounts) -> None:
    """Before any noise: the model fits in memory (from the plan) and the records will (from
    the rows read, as the data's own row limit is checked)."""
    if not plan.postprocess.synthetic:
        return
    check_model(plan)
    for invariant in plan.invariants:  # the records tabulate to the noisy tables' sub-tables
        if not any(determines(plan.schema, t.by, invariant.by) for t in plan.tables):
            raise ReleaseError(
                f"postprocess.synthetic cannot hold the invariant table {invariant.name!r}: no "
                "noisy table has its columns; add one that does, or switch synthetic off."
            )
    if true_counts.rows_read is not None and true_counts.rows_read > MAX_SYNTHETIC_ROWS:
        raise ReleaseError(
            f"postprocess.synthetic makes at most {MAX_SYNTHETIC_ROWS:,} rows of microdata and "
            "the data have more; switch synthetic off for this data."
        )


@dataclass(frozen=True)
class _Drawn:
    tables: tuple[NoisyTable, ...]
    measurements: tuple[NoisyMeasurement, ...]
    applied: tuple[str, ...]
    skipped: tuple[str, ...]
    invariants: tuple[InvariantTable, ...] = ()
    microdata: Microdata | None = None


def _noisy_tables(
    plan: Plan,
    allocation: PlanAllocation,
    true_counts: TrueCounts,
    add_noise: Callable[[np.ndarray, TableBudget], np.ndarray],
    synthesis_noise: SynthesisNoise,
) -> _Drawn:
    """Noise on every measurement once, then the published tables from them."""
    if not plan.tables:  # a plan of statistics only
        return _Drawn((), (), (), ())
    _check_counts(plan, true_counts)
    # invariant tables (issue 27): exact counts, no noise, held fixed by post-processing
    _check_synthetic(plan, true_counts)
    exact = {s.name: true_counts.counts[s.name] for s in plan.invariants}
    check_invariants(plan, exact)  # before any noise is drawn
    check_zeros(plan, true_counts)  # issue 35: before any noise, inside the uncommitted charge
    try:
        return _drawn(plan, allocation, true_counts, (add_noise, synthesis_noise), exact)
    except InternalError:
        if not (plan.invariants or plan.structural_zeros):
            raise
        raise DataError(CONFLICT) from None


CONFLICT = (
    "The data do not fit the plan's constraints: the invariant tables' exact counts leave "
    "no non-negative tables that keep the structural zeros (rows fall in cells the zeros call "
    "impossible); correct those rows, or drop the zero or the invariant."
)


def check_zeros(plan: Plan, true_counts: TrueCounts) -> None:
    """Refuse data with rows in a structural-zero cell of any table (issue 35: they were
    released as 0, the totals short by those rows, and charged). Called before any noise
    is drawn, inside the ledger's charge, so the refusal commits nothing. The message names
    the zero, never a count. A zero that no table carries is checked on its own count
    (`zero_tables`)."""
    for spec in (*plan.tables, *plan.invariants, *zero_tables(plan)):
        counts = true_counts.counts.get(spec.name)
        if counts is None or counts.size > MASK_LIMIT:
            continue
        for zero in plan.structural_zeros:
            mask = zero_mask(plan.schema, [zero], spec.by)
            if mask.size == counts.size and mask.any() and counts.reshape(-1)[mask].any():
                raise DataError(
                    f"The data have rows in the structural zero {zero.describe()}, which the "
                    "plan says no row can fall in; correct those rows or drop the zero."
                )


def check_invariants(plan: Plan, exact: Mapping[str, np.ndarray]) -> None:
    """Refuse invariant tables whose exact counts disagree on a sub-table they share: rows
    left out of one (a value outside a column's domain, without `other`) but not the other.
    No noisy table could agree with both. The message holds no count."""
    if len(plan.invariants) < 2:
        return
    specs = plan.invariants
    problem = problem_of(
        plan.schema, [(s.name, s.by) for s in specs], dict(exact), {s.name: 1.0 for s in specs}
    )
    if not is_consistent(problem.constraints, problem.measured, tol=0.0):
        names = ", ".join(s.name for s in specs)
        raise DataError(
            f"The invariant tables ({names}) disagree on what they share: the data have rows "
            "that some of them leave out (a value outside a column's domain); give that "
            "column an `other` value, or mark fewer tables invariant."
        )


def _drawn(
    plan: Plan,
    allocation: PlanAllocation,
    true_counts: TrueCounts,
    noises: tuple[Callable[[np.ndarray, TableBudget], np.ndarray], SynthesisNoise],
    exact: dict[str, np.ndarray],
) -> _Drawn:
    settings = plan.postprocess.effective
    add_noise, synthesis_noise = noises
    if allocation.derived:
        measurement_set = MeasurementSet(plan, allocation, invariant_counts=exact)
        truths = measurement_set.true_measurements(true_counts.counts)
        noisy = {m.name: add_noise(truths[m.name], m) for m in allocation.measurements}
        raw = measurement_set.estimate(noisy)
        result = derived_postprocess(plan, allocation, raw, settings, invariant_counts=exact)
    else:
        noisy = {t.name: add_noise(true_counts.counts[t.name], t) for t in allocation.tables}
        raw = noisy
        result = postprocess(plan, allocation, noisy, settings, invariant_counts=exact)
    released, applied, microdata = result.released_counts, result.steps_applied, None
    if plan.postprocess.synthetic:  # from the post-processed measurements only, never the data
        share, counted = allocation.synthesis, true_counts.counts  # issue 38.6: its own share
        if share is None:
            microdata = synthesize(plan, released)
        else:  # it measures more: the share's own tables (true counts) meet its noise there
            microdata = synthesize_with_share(plan, share.draw, released, counted, synthesis_noise)
        released = {s.name: microdata.tabulate(plan.schema, s.by) for s in plan.tables}
        applied = (*applied, "synthetic")
    tables = tuple(
        NoisyTable(budget=t, noisy_counts=raw[t.name], released_counts=released[t.name])
        for t in allocation.tables
    )
    measurements = tuple(NoisyMeasurement(m, noisy[m.name]) for m in allocation.measurements)
    invariants = tuple(
        InvariantTable(spec, np.rint(exact[spec.name]).astype(np.int64)) for spec in plan.invariants
    )
    return _Drawn(tables, measurements, applied, result.steps_skipped, invariants, microdata)


def _accuracy(
    drawn: _Drawn, plan: Plan, allocation: PlanAllocation, simulations: int
) -> dict[str, TableAccuracy]:
    simulations = simulations_within(plan, simulations)  # what admission chose (issue 35)
    if simulations <= 0 or not drawn.tables:
        return {}
    noisy = {m.name: m.noisy_counts for m in drawn.measurements}
    settings = plan.postprocess.effective
    if not plan.postprocess.synthetic:
        return accuracy_after_postprocessing(
            plan, allocation, noisy, settings, simulations=simulations
        )
    tree = check_model(plan)
    generator = np.random.default_rng()

    def tabulate(released: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return model_tabulations(plan, released, generator, tree)

    return accuracy_after_postprocessing(
        plan, allocation, noisy, settings, simulations=simulations, then=tabulate
    )


def draw_release(
    plan: Plan,
    true_counts: TrueCounts | Counter,
    allocation: Allocation | None = None,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    statistics_source: StatSource | None = None,
) -> Release:
    """Draw the release: fresh secure noise for every table, then post-processing.

    `simulations` (0 to skip) estimates the accuracy after post-processing from the noisy
    measurements only (see `dprelease.postprocess.accuracy`). With statistics or discovered
    domains (issue 16), `statistics_source` holds their rows and `true_counts` may be a
    function that counts the plan once its domains are discovered.
    """
    allocation = plan_allocation(plan, allocation)
    if plan.postprocess.synthetic:  # the model's bound, before any noise (discoveries too)
        check_model(plan)
    plan, allocation, domains, empty = complete_plan(plan, allocation, statistics_source, None)
    true_counts = true_counts(plan) if callable(true_counts) else true_counts

    def secure(counts: np.ndarray, table: TableBudget) -> np.ndarray:
        sens = table.sensitivity
        return secure_noisy_counts(counts, table.noise, sens.l1, sens.l2_squared)

    drawing = allocation.measurements if allocation.derived else allocation.tables
    build_samplers((t.noise, t.cells) for t in drawing)
    drawn = _noisy_tables(plan, allocation, true_counts, secure, SECURE_SYNTHESIS)
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    accuracy = _accuracy(drawn, plan, allocation, simulations)
    statistics = draw_statistics(plan, allocation, statistics_source, None)
    return Release(
        plan,
        allocation,
        drawn.tables,
        drawn.applied,
        drawn.skipped,
        created,
        accuracy=accuracy,
        measurements=drawn.measurements,
        statistics=statistics,
        discovered=domains,
        empty_tables=empty,
        invariants=drawn.invariants,
        microdata=drawn.microdata,
    )


def draw_preview(
    plan: Plan,
    true_counts: TrueCounts | Counter,
    allocation: Allocation | None = None,
    rng: np.random.Generator | None = None,
    *,
    simulations: int = 0,
    statistics_source: StatSource | None = None,
) -> Preview:
    """A fast preview with numpy's sampler, for the data holder only.

    With `simulations` > 0 it also estimates the accuracy after post-processing (seconds).
    """
    allocation = plan_allocation(plan, allocation)
    generator = rng or np.random.default_rng()
    if plan.postprocess.synthetic:
        check_model(plan)
    plan, allocation, domains, _ = complete_plan(plan, allocation, statistics_source, generator)
    true_counts = true_counts(plan) if callable(true_counts) else true_counts

    def fast(counts: np.ndarray, table: TableBudget) -> np.ndarray:
        noisy: np.ndarray = counts + preview_noise(table.noise, counts.size, generator)
        return noisy

    drawn = _noisy_tables(plan, allocation, true_counts, fast, PreviewSynthesisNoise(generator))
    accuracy = _accuracy(drawn, plan, allocation, simulations)
    statistics = draw_statistics(plan, allocation, statistics_source, generator)
    errors = preview_errors(plan, allocation, statistics_source, generator)
    return Preview(
        plan,
        allocation,
        drawn.tables,
        true_counts,
        drawn.applied,
        drawn.skipped,
        accuracy,
        measurements=drawn.measurements,
        statistics=statistics,
        discovered=domains,
        statistic_errors=errors,
        invariants=drawn.invariants,
        microdata=drawn.microdata,
    )
