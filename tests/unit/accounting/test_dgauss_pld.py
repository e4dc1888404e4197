"""approx draws the discrete Gaussian; its (ε, δ) is certified by the PLD (issue 14 point 4).

Independent references: δ of one discrete Gaussian summed from its pmf with mpmath (the 1-D
formula of Canonne, Kamath & Steinke 2020), the exact profile of k equal discrete Gaussians
by direct convolution (tests/helpers/audit.py), and the analytic Gaussian (Balle & Wang).
"""

import json
import math

import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from dprelease.accounting.allocation import allocate
from dprelease.accounting.dgauss_pld import (
    certify,
    holds,
    pld_delta,
    shift_pattern,
)
from dprelease.accounting.mechanisms import gaussian_sigma
from dprelease.errors import BudgetError
from dprelease.plan.parse import parse_plan
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files
from helpers.audit import discrete_gaussian_profile
from helpers.plans import plan_dict

ROW = Sensitivity(l1=1, l2_squared=1)
REPLACE = Sensitivity(l1=2, l2_squared=2)


def exact_delta(sigma: float, epsilon: float) -> float:
    """δ = P[Y > εσ² − ½] − e^ε P[Y > εσ² + ½], Y ~ N_Z(0, σ²), Δ = 1, summed with mpmath."""
    mpmath.mp.dps = 40
    s2 = mpmath.mpf(sigma) ** 2
    top = int(40 * sigma + 60)

    def weight(y: int) -> mpmath.mpf:
        return mpmath.exp(-(mpmath.mpf(y) ** 2) / (2 * s2))

    normaliser = 1 + 2 * mpmath.fsum(weight(y) for y in range(1, top))

    def tail(a: mpmath.mpf) -> mpmath.mpf:  # P[Y > a]
        return mpmath.fsum(weight(y) for y in range(int(mpmath.floor(a)) + 1, top)) / normaliser

    eps = mpmath.mpf(epsilon)
    return float(tail(eps * s2 - mpmath.mpf(1) / 2) - mpmath.exp(eps) * tail(eps * s2 + 0.5))


@pytest.mark.parametrize(
    ("sigma", "epsilon"),
    [(0.8, 3.0), (1.0, 2.0), (3.0, 1.0), (5.0, 1.0), (20.0, 0.2), (60.0, 0.05)],
)
def test_one_discrete_gaussian_certificate_is_above_the_exact_delta_and_close(sigma, epsilon):
    exact = exact_delta(sigma, epsilon)
    certified = pld_delta([sigma], ROW, epsilon)
    assert exact <= certified <= exact * (1 + 2e-4) + 2e-15


def test_discrete_and_continuous_differ_so_the_continuous_formula_is_no_proof():
    # at σ = 5, ε = 1 the discrete Gaussian's δ is about 4 % above the continuous one's
    continuous = norm.cdf(0.1 - 5) - math.exp(1) * norm.cdf(-0.1 - 5)
    assert exact_delta(5.0, 1.0) > continuous * 1.03


@pytest.mark.parametrize(("k", "sigma", "epsilon"), [(4, 6.0, 0.8), (9, 12.0, 0.5)])
def test_composed_certificate_is_above_the_exact_profile_of_k_equal_measurements(k, sigma, epsilon):
    # k measurements of one σ, each moved by 1: exactly the k-cell shift of the helper
    exact = discrete_gaussian_profile(sigma, np.ones(k, dtype=int), np.array([epsilon]))[0]
    certified = pld_delta([sigma] * k, ROW, epsilon)
    assert exact <= certified <= exact * 1.01 + 2e-15
    # under replace each marginal moves two cells: 2k cells of the same σ
    exact2 = discrete_gaussian_profile(sigma, np.ones(2 * k, dtype=int), np.array([epsilon]))[0]
    certified2 = pld_delta([sigma] * k, REPLACE, epsilon)
    assert exact2 <= certified2 <= exact2 * 1.01 + 2e-15


def test_calibration_keeps_the_shape_and_finds_the_least_factor():
    epsilon, delta = 1.0, 1e-10
    unit = gaussian_sigma(epsilon, delta, 1.0)
    shape = [1.0, 1.5, 2.0, 3.0, 5.0, 8.0]
    total = sum(1 / q for q in shape)
    sigmas = [unit * math.sqrt(total * q) for q in shape]  # Σ 1/σ² = 1/σ*²: analytic-tight
    found = certify(sigmas, ROW, epsilon, delta)
    assert found.method == "pld" and 1.0 <= found.factor < 1.005
    assert found.sigmas == tuple(s * found.factor for s in sigmas)
    assert pld_delta(found.sigmas, ROW, epsilon) <= delta
    assert holds(found.sigmas, ROW, epsilon, delta)
    if found.factor > 1:  # least: a little less noise is not certified
        smaller = [s * (found.factor - 1e-5) for s in sigmas]
        assert not holds(smaller, ROW, epsilon, delta)
    assert not holds([s * 0.99 for s in found.sigmas], ROW, epsilon, delta)
    assert found.epsilon <= epsilon


def test_units_of_several_rows_and_tiny_delta_fall_back_to_the_zcdp_bound():
    household = Sensitivity(l1=3, l2_squared=9)
    assert shift_pattern(household) is None
    found = certify([40.0, 60.0], household, 1.0, 1e-10)
    rho = sum(9 / (2 * s * s) for s in found.sigmas)
    from dprelease.accounting.composition import zcdp_to_epsilon

    assert found.method == "zcdp" and zcdp_to_epsilon(rho, 1e-10)[0] <= 1.0
    assert certify([40.0, 60.0], ROW, 1.0, 1e-20).method == "zcdp"


TABLES = [
    {"name": "total", "by": []},
    {"name": "sex", "by": ["sex"]},
    {"name": "age_by_sex", "by": ["age", "sex"]},
    {"name": "race", "by": ["race"]},
]


def _plan(**budget):
    raw = plan_dict()
    raw["tables"] = TABLES
    raw["budget"] = {"epsilon": 1.0, "delta": 1e-10, "accounting": "approx", **budget}
    return parse_plan(raw)


@pytest.mark.parametrize("strategy", ["auto", "workload"])
def test_approx_allocation_is_certified_and_close_to_the_analytic_gaussian(strategy):
    allocation = allocate(_plan(strategy=strategy))
    measured = allocation.measurements
    assert {m.noise.mechanism for m in measured} == {"discrete_gaussian"}
    sigmas = [m.noise.scale for m in measured]
    assert pld_delta(sigmas, ROW, 1.0) <= 1e-10
    assert allocation.total.composition == "pld" and allocation.total.epsilon <= 1.0
    # the same σ's through the continuous formula: within a fraction of a percent of δ = 1e-10
    sigma = sum(s**-2 for s in sigmas) ** -0.5
    analytic = norm.cdf(0.5 / sigma - sigma) - math.e * norm.cdf(-0.5 / sigma - sigma)
    assert 0.9e-10 < analytic <= 1e-10


def test_an_approx_release_writes_integers_and_names_the_discrete_gaussian(tmp_path):
    plan = _plan(strategy="workload")
    rng = np.random.default_rng(1)
    from dprelease.data.count import TrueCounts

    counts = {s.name: rng.integers(0, 500, s.cells(plan.schema)) for s in plan.tables}
    release = draw_release(plan, TrueCounts(counts), simulations=0)
    for table in release.tables:
        assert table.noisy_counts.dtype.kind == "i"
    files = release_files(release)
    metadata = json.loads(files["metadata.json"])
    assert {t["mechanism"] for t in metadata["measurements"]} == {"discrete_gaussian"}
    assert metadata["total"]["composition"] == "pld"
    for name, body in files.items():
        if name.startswith("measurements/"):
            rows = body.decode().splitlines()[1:]
            assert all(float(r.split(",")[-2]).is_integer() for r in rows)


def test_fixed_sigmas_keep_their_value_and_the_rest_is_scaled():
    """A lock's or a target's σ is kept (its margin of error stays met); the others grow."""
    sigmas = (8.0, 6.0, 6.0)
    assert not holds(sigmas, ROW, 1.0, 1e-6)
    free = certify(sigmas, ROW, 1.0, 1e-6)
    kept = certify(sigmas, ROW, 1.0, 1e-6, fixed=(True, False, False))
    assert kept.sigmas[0] == 8.0
    assert kept.sigmas[1] == kept.sigmas[2] >= free.sigmas[1] > 6.0
    assert holds(kept.sigmas, ROW, 1.0, 1e-6)
    assert not holds((8.0, kept.sigmas[1] * 0.99, kept.sigmas[2] * 0.99), ROW, 1.0, 1e-6)


def test_fixed_sigmas_that_need_more_than_the_budget_are_refused():
    with pytest.raises(BudgetError, match=r"raise budget\.epsilon"):
        certify((1.0, 1.0), ROW, 0.5, 1e-6, fixed=(True, True))
    with pytest.raises(BudgetError, match=r"raise budget\.epsilon"):
        certify((1.0, 5.0), ROW, 0.5, 1e-6, fixed=(True, False))


def test_vast_noise_is_certified_by_zcdp_without_laying_out_its_pld():
    """A loose target can ask for σ ~ 1e9; dp_accounting would lay out 1e10 integers."""
    found = certify((1e9, 5.0), ROW, 1.0, 1e-8)  # above _PLD_MAX_SIGMA
    assert found.method == "zcdp" and holds(found.sigmas, ROW, 1.0, 1e-8)
