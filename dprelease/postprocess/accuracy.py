"""Accuracy after post-processing, estimated by simulation from the released measurements only.

Post-processing changes the error: consistency pools measurements (less variance), while
non-negativity and rounding add bias, mostly upward on small cells. Neither has a simple
formula, so we simulate. A plausible truth is built from the noisy measurements alone (their
consistent, non-negative, whole-number estimate); fresh noise with each table's known
distribution is added to it, the same post-processing is run, and the errors of the raw
simulated measurements and of the post-processed tables against that truth are averaged over
cells and simulations. Everything used is public (measurements, noise distributions, plan),
so the figures are safe to publish; the numpy sampler is fine here because the simulated
noise is never released.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dprelease.accounting.allocation import Allocation
from dprelease.plan.model import Plan, Postprocess
from dprelease.postprocess.pipeline import consistent_pipeline, make_problem, postprocess
from dprelease.release.noise import preview_noise

DEFAULT_SIMULATIONS = 20
TIME_LIMIT = 10.0  # seconds; at least MIN_SIMULATIONS run whatever the time
MIN_SIMULATIONS = 3
TRUTH_SETTINGS = Postprocess(clamp=(None, None), nonnegative=True, integer=True, consistent=True)


@dataclass(frozen=True)
class TableAccuracy:
    """Per-cell RMSE and mean error (bias) of one table, before and after post-processing."""

    rmse_raw: float
    rmse_postprocessed: float
    bias_raw: float
    bias_postprocessed: float
    simulations: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "rmse_raw": self.rmse_raw,
            "rmse_postprocessed": self.rmse_postprocessed,
            "bias_raw": self.bias_raw,
            "bias_postprocessed": self.bias_postprocessed,
            "simulations": self.simulations,
        }


def accuracy_after_postprocessing(
    plan: Plan,
    allocation: Allocation,
    noisy_counts: dict[str, np.ndarray],
    settings: Postprocess | None = None,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    rng: np.random.Generator | None = None,
    time_limit: float = TIME_LIMIT,
) -> dict[str, TableAccuracy]:
    """Per table: RMSE and bias of the raw measurements and of the post-processed counts.

    Runs up to `simulations` draws, stopping early after `time_limit` seconds (never before
    `MIN_SIMULATIONS`); each entry says how many ran.
    """
    settings = settings or plan.postprocess
    generator = rng or np.random.default_rng()
    # one problem (constraints built once) for the truth and every simulation
    problem = make_problem(plan, allocation, noisy_counts)
    truth = consistent_pipeline(problem, TRUTH_SETTINGS).released_counts
    names = problem.names
    noise_of = {name: allocation.table(name).noise for name in names}
    squares = {name: np.zeros(2) for name in names}
    sums = {name: np.zeros(2) for name in names}
    start = time.perf_counter()
    runs = 0
    for _ in range(max(simulations, 1)):
        if runs >= MIN_SIMULATIONS and time.perf_counter() - start > time_limit:
            break
        simulated = {
            name: truth[name] + preview_noise(noise_of[name], truth[name].size, generator)
            for name in names
        }
        if settings.consistent:
            measured = np.concatenate([simulated[name].astype(np.float64) for name in names])
            released = consistent_pipeline(replace(problem, measured=measured), settings)
        else:
            released = postprocess(plan, allocation, simulated, settings)
        for name in names:
            raw_error = simulated[name] - truth[name]
            post_error = released.released_counts[name] - truth[name]
            squares[name] += [np.sum(raw_error**2.0), np.sum(post_error**2.0)]
            sums[name] += [np.sum(raw_error), np.sum(post_error)]
        runs += 1
    result = {}
    for name in names:
        draws = runs * truth[name].size
        result[name] = TableAccuracy(
            rmse_raw=math.sqrt(squares[name][0] / draws),
            rmse_postprocessed=math.sqrt(squares[name][1] / draws),
            bias_raw=float(sums[name][0] / draws),
            bias_postprocessed=float(sums[name][1] / draws),
            simulations=runs,
        )
    return result
