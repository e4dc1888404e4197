"""The simulated error after cell-by-cell post-processing against its exact value.

Without consistency, a cell released as max(0, t + Z) (Z discrete Laplace, an integer, so
rounding changes nothing) has the error e = max(Z, -t), whose moments follow from the
noise's probability mass P(Z = k) = (1 - a)/(1 + a) a^|k|, a = exp(-1/b), summed here
directly. The simulation's truth is the measurements clipped and rounded, so measurements that
are whole numbers ≥ 0 are the truth itself, and its mean error and mean squared error over
cells must match the exact ones within 5 standard errors (a false alarm below 1e-6). Power:
the same check refuses the simulation of measurements one higher (a truth off by one).
"""

import math

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.plan.parse import parse_plan
from dprelease.postprocess.accuracy import accuracy_after_postprocessing
from helpers.plans import plan_dict

SIMULATIONS = 2000
TRUTH = np.array([i % 6 for i in range(18)])  # small counts: clipping at 0 matters
Z_SCORE = 5.0


def _exact(scale: float, truth: np.ndarray) -> tuple[float, float, float, float]:
    """Mean over cells of E[e], E[e²] and their variances, e = max(Z, -t)."""
    a = math.exp(-1.0 / scale)
    k = np.arange(-400, 401)
    mass = (1 - a) / (1 + a) * a ** np.abs(k)
    bias = mse = var_e = var_e2 = 0.0
    for t in truth:
        error = np.maximum(k, -t).astype(np.float64)
        e1, e2, e4 = (mass * error).sum(), (mass * error**2).sum(), (mass * error**4).sum()
        bias, mse = bias + e1, mse + e2
        var_e, var_e2 = var_e + e2 - e1**2, var_e2 + e4 - e2**2
    n = len(truth)
    return bias / n, mse / n, var_e / n, var_e2 / n


def _simulated(measured: np.ndarray, seed: int) -> tuple[float, float, float]:
    raw = plan_dict(accounting="pure", epsilon=0.5, allocation="equal")
    raw["tables"] = [{"name": "age_by_sex", "by": ["age", "sex"]}]
    # one table: the cellwise clipping error alone (consistency is on by default since stop 14)
    raw["postprocess"] = {**raw.get("postprocess", {}), "consistent": False}
    plan = parse_plan(raw)
    assert not plan.postprocess.consistent and plan.postprocess.nonnegative
    allocation = allocate(plan)
    accuracy = accuracy_after_postprocessing(
        plan,
        allocation,
        {"age_by_sex": measured},
        simulations=SIMULATIONS,
        rng=np.random.default_rng(seed),
        time_limit=math.inf,
    )["age_by_sex"]
    assert accuracy.simulations == SIMULATIONS and not accuracy.exact
    return (
        accuracy.bias_postprocessed,
        accuracy.rmse_postprocessed**2,
        allocation.tables[0].noise.scale,
    )


def _within(simulated: tuple[float, float, float], truth: np.ndarray) -> bool:
    bias, mse, scale = simulated
    exact_bias, exact_mse, var_e, var_e2 = _exact(scale, truth)
    draws = SIMULATIONS * len(truth)
    return abs(bias - exact_bias) <= Z_SCORE * math.sqrt(var_e / draws) and abs(
        mse - exact_mse
    ) <= Z_SCORE * math.sqrt(var_e2 / draws)


@pytest.mark.parametrize("seed", [11, 12])
def test_simulated_error_matches_the_exact_error_of_clipping(seed):
    assert _within(_simulated(TRUTH, seed), TRUTH)


def test_a_truth_off_by_one_is_caught():
    assert not _within(_simulated(TRUTH + 1, 13), TRUTH)
