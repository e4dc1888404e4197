"""Issue 38.1: the shrunk estimate (opt-in) keeps the grand total unbiased over repeated
releases, and lowers the error of a sparse fine table against the least-squares path."""

import math

import numpy as np

from dprelease.accounting.allocation import allocate
from dprelease.plan.model import Postprocess
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from helpers.census import census_plan, census_truth


def errors(plan, estimate: str, releases: int, seed: int) -> tuple[np.ndarray, float]:
    """Grand-total errors, and the fine table's RMSE, over `releases` releases."""
    allocation = allocate(plan)
    truth = census_truth(plan).counts
    measurement_set = MeasurementSet(plan, allocation)
    truths = measurement_set.true_measurements(truth)
    settings = Postprocess(estimate=estimate)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    totals, squares = [], []
    for _ in range(releases):
        noisy = {
            m.name: truths[m.name] + m.noise.kind.preview(rng, m.noise.scale, m.cells)
            for m in allocation.measurements
        }
        estimates = measurement_set.estimate(noisy)
        released = derived_postprocess(plan, allocation, estimates, settings, rng).released_counts
        totals.append(float(released["total"][0] - truth["total"][0]))
        fine = released["age_by_sex_by_race"] - truth["age_by_sex_by_race"]
        squares.append(float(np.mean(fine.astype(np.float64) ** 2)))
    return np.array(totals), math.sqrt(float(np.mean(squares)))


def test_the_grand_total_stays_unbiased_and_the_sparse_table_gains():
    plan = census_plan()
    totals, shrunk_rmse = errors(plan, "shrunk", releases=200, seed=11)
    se = totals.std(ddof=1) / math.sqrt(totals.size)
    assert abs(totals.mean()) <= 3 * se
    _, nonnegative_rmse = errors(plan, "least_squares", releases=200, seed=11)
    assert shrunk_rmse < 0.95 * nonnegative_rmse  # 0.90 measured
