"""Accuracy after post-processing, estimated by simulation from the released measurements only.

The raw error is known exactly: each measurement's noise, or under `strategy: auto` the
least-squares estimate's exact variance (`TableBudget.expected_rmse`); so is the error after
consistency alone on derived tables (it is that same estimate). Non-negativity, clamping and
rounding add bias, mostly upward on small cells, and have no simple formula, so we simulate.
A plausible truth is built from the noisy measurements alone (their non-negative,
whole-number estimate; consistent across tables only when the release is consistent or its
tables are derived, see `plausible_truth`); fresh noise with each table's known
distribution is added to it, the same post-processing is run, and the errors of the raw
simulated measurements and of the post-processed tables against that truth are averaged over
cells and simulations. Everything used is public (measurements, noise distributions, plan),
so the figures are safe to publish; the numpy sampler is fine here because the simulated
noise is never released.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dprelease.accounting.allocation import Allocation
from dprelease.admission import DataSize, Estimate, register
from dprelease.limits import ACCURACY_WORK_NS, ADMISSION_WORK_NS
from dprelease.plan.model import Plan, Postprocess
from dprelease.postprocess.cost import run_ns
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from dprelease.postprocess.pipeline import (
    Problem,
    clamp,
    consistent_pipeline,
    postprocess,
    problem_of,
    round_to_integers,
)
from dprelease.postprocess.weight_groups import mixed, weight_groups

DEFAULT_SIMULATIONS = 20
TIME_LIMIT = 10.0  # seconds; at least MIN_SIMULATIONS run whatever the time (a safety: the
# count is chosen first from the estimated work, `simulations_within`)
MIN_SIMULATIONS = 3
OTHER_STAGES_NS = 300_000_000  # the strategy, statistics and files beside (issue 35 bench)
TRUTH_SETTINGS = Postprocess(clamp=(None, None), nonnegative=True, integer=True, consistent=True)


@dataclass(frozen=True)
class TableAccuracy:
    """Per-cell RMSE and mean error (bias) of one table, before and after post-processing.

    The raw figures are exact (the noise, or the least-squares estimate, is unbiased with a
    known variance). The post-processed ones are exact when no step moves counts off the
    least-squares estimate (`exact`), else simulated.
    """

    rmse_raw: float
    rmse_postprocessed: float
    bias_raw: float
    bias_postprocessed: float
    simulations: int
    exact: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "rmse_raw": self.rmse_raw,
            "rmse_postprocessed": self.rmse_postprocessed,
            "bias_raw": self.bias_raw,
            "bias_postprocessed": self.bias_postprocessed,
            "simulations": self.simulations,
            "method": "exact" if self.exact else "simulated",
        }


def _moves_counts(settings: Postprocess) -> bool:
    """True when a step other than consistency runs (its effect has no simple formula)."""
    lower, upper = settings.clamp
    shrunk = settings.consistent and settings.estimate == "shrunk"
    return (
        shrunk or settings.nonnegative or settings.integer or lower is not None or upper is not None
    )


def _exact(
    plan: Plan, allocation: Allocation, settings: Postprocess
) -> dict[str, TableAccuracy] | None:
    """Exact figures when only linear steps run: the noise itself, or the LS estimate."""
    shrunk = allocation.derived and settings.consistent and settings.estimate == "shrunk"
    if shrunk or _moves_counts(settings) or plan.structural_zeros:
        return None  # the exact listed model knows no zeros: simulate
    after = {t.name: t.expected_rmse for t in allocation.tables}
    if settings.consistent and not allocation.derived:
        # least squares over the listed tables (scipy-backed model: imported only here)
        from dprelease.strategy.listed import consistent_rmse

        listed = [(t.name, t.spec.by, t.noise.variance) for t in allocation.tables]
        found = consistent_rmse(plan.schema, listed)
        if found is None:
            return None
        after = found
    return {
        t.name: TableAccuracy(t.expected_rmse, after[t.name], 0.0, 0.0, 0, exact=True)
        for t in allocation.tables
    }


def plausible_truth(
    plan: Plan,
    allocation: Allocation,
    noisy_measurements: dict[str, np.ndarray],
    settings: Postprocess,
) -> tuple[dict[str, np.ndarray], Problem | None]:
    """A non-negative, whole-number truth per measurement, from the measurements alone.

    When the tables are post-processed together (``consistent``, or tables derived from
    measurements by least squares), the truth must be consistent too: the measurements'
    consistent pipeline (`TRUTH_SETTINGS`), and its `Problem` is returned for the simulations.
    Otherwise every table is post-processed on its own, cell by cell, so its simulated error
    depends on its own truth only: each measurement clipped at 0 and rounded (max(0, y)
    rounded half to even), with no least squares and no controlled rounding (no scipy).
    """
    measured = allocation.measurements
    if not settings.consistent and not allocation.derived:
        truth = {
            m.name: round_to_integers(clamp(noisy_measurements[m.name].astype(np.float64), 0, None))
            for m in measured
        }
        return truth, None
    problem = problem_of(
        plan.schema,
        [(m.name, m.spec.by) for m in measured],
        noisy_measurements,
        {m.name: m.noise.variance for m in measured},
        zeros=plan.structural_zeros,
    )
    return consistent_pipeline(problem, TRUTH_SETTINGS).released_counts, problem


def accuracy_after_postprocessing(
    plan: Plan,
    allocation: Allocation,
    noisy_measurements: dict[str, np.ndarray],
    settings: Postprocess | None = None,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    rng: np.random.Generator | None = None,
    time_limit: float = TIME_LIMIT,
    then: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
) -> dict[str, TableAccuracy]:
    """Per published table: RMSE and bias of the raw estimate and of the released counts.

    `noisy_measurements` holds the allocation's measurements (under `strategy: workload`, the
    tables). Runs up to `simulations` draws, stopping early after `time_limit` seconds (never
    before `MIN_SIMULATIONS`); each entry says how many ran. `then` is a further step on the
    post-processed tables (the synthetic microdata's tabulations, issue 27), simulated too.
    """
    settings = settings or plan.postprocess
    if mixed(plan):  # issue 37.8: counts and each weight's totals apart
        result: dict[str, TableAccuracy] = {}
        for group in weight_groups(plan, allocation, settings):
            names = [m.name for m in group.allocation.measurements]
            if not names:
                continue
            result.update(
                accuracy_after_postprocessing(
                    group.plan,
                    group.allocation,
                    {name: noisy_measurements[name] for name in names},
                    group.settings,
                    simulations=simulations,
                    rng=rng,
                    time_limit=time_limit,
                    then=then,
                )
            )
        return result
    exact = None if then is not None else _exact(plan, allocation, settings)
    if exact is not None:
        return exact
    generator = rng or np.random.default_rng()
    measured = allocation.measurements
    truth_measured, problem = plausible_truth(plan, allocation, noisy_measurements, settings)
    derived = MeasurementSet(plan, allocation) if allocation.derived else None
    truth = derived.estimate(truth_measured) if derived is not None else truth_measured
    names = [t.name for t in allocation.tables]
    squares = dict.fromkeys(names, 0.0)
    sums = dict.fromkeys(names, 0.0)
    start, cpu = time.perf_counter(), time.process_time()
    runs = 0
    for _ in range(max(simulations, 1)):
        spent = time.process_time() - cpu > ACCURACY_WORK_NS / 1e9  # what admission allows
        if runs >= MIN_SIMULATIONS and (spent or time.perf_counter() - start > time_limit):
            break
        simulated = {
            m.name: truth_measured[m.name] + m.noise.preview(truth_measured[m.name].size, generator)
            for m in measured
        }
        if derived is not None:
            estimates = derived.estimate(simulated)
            released = derived_postprocess(plan, allocation, estimates, settings, generator)
        elif problem is not None:
            values = np.concatenate([simulated[m.name].astype(np.float64) for m in measured])
            released = consistent_pipeline(replace(problem, measured=values), settings)
        else:
            released = postprocess(plan, allocation, simulated, settings)
        tables = released.released_counts if then is None else then(released.released_counts)
        for name in names:
            error = tables[name] - truth[name]
            squares[name] += float(np.sum(error**2.0))
            sums[name] += float(np.sum(error))
        runs += 1
    result = {}
    for table in allocation.tables:
        draws = runs * truth[table.name].size
        result[table.name] = TableAccuracy(
            rmse_raw=table.expected_rmse,
            rmse_postprocessed=math.sqrt(squares[table.name] / draws),
            bias_raw=0.0,
            bias_postprocessed=sums[table.name] / draws,
            simulations=runs,
        )
    return result


def simulations_within(plan: Plan, wanted: int = DEFAULT_SIMULATIONS) -> int:
    """How many simulated releases fit ACCURACY_WORK_NS (issue 35, finding 9): each reruns
    the post-processing (`cost.run_ns`, typical; the plausible truth is one more; the loop
    stops at ACCURACY_WORK_NS of CPU too: issue 35 bench plan 27 ran 12.6 s). Fewer than
    MIN_SIMULATIONS would say little: then none, and the release states the raw estimate's
    exact error instead (`metadata.released_error`)."""
    work = run_ns(plan, typical=True)
    if work <= 0:
        return wanted
    # within what the release's own post-processing (its bound) leaves of the admission's
    budget = min(ACCURACY_WORK_NS, ADMISSION_WORK_NS - run_ns(plan) - OTHER_STAGES_NS)
    fitting = int(max(budget, 0) // work)
    return min(wanted, fitting) if fitting >= MIN_SIMULATIONS else 0


def accuracy_estimate(plan: Plan, data: DataSize) -> Estimate:
    """Admission's estimate of the accuracy simulation: the simulations that fit."""
    count = simulations_within(plan)
    path = f"{count} simulations" if count else "no simulation (the raw estimate's exact error)"
    work = (count + 1) * run_ns(plan, typical=True) if count else 0
    return Estimate("accuracy", work, 0, "ACCURACY_WORK_NS", path)


register("accuracy", accuracy_estimate)
