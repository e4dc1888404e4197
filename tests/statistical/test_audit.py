"""Privacy audits of every mechanism as the release draws it (method: tests/helpers/audit.py).

Each audit draws from OpenDP's secure sampler on neighbouring counts at the table's real
sensitivity and must (1) find no violation of the claimed privacy (false alarm < 1e-6 by
construction) and (2) catch the same mechanism with its noise scale × 0.8 (power). Sample
sizes give the under-noised audit a margin of ≥ 9 standard deviations of its bound (measured
with the fast sampler over 30 repetitions; see the module docstring).
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.accounting.composition import zcdp_to_epsilon
from dprelease.accounting.mechanisms import GAUSSIAN, Noise, gaussian_delta, gaussian_sigma
from dprelease.plan.parse import parse_plan
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.noise import preview_noise
from helpers.audit import (
    audit_table,
    claim_of,
    discrete_gaussian_profile,
    gdp_delta,
    neighbouring_shift,
)

HOUSEHOLD = {"kind": "id", "column": "household", "max_rows": 3}


def _table(budget, neighbors="add_remove", unit=None, tables=1):
    raw = {
        "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
        "tables": [{"name": f"t{i}", "by": ["sex"]} for i in range(tables)],
        "budget": {**budget, "strategy": "workload"},  # each accountant's own mechanism
        "neighbors": neighbors,
    }
    if unit is not None:
        raw["unit"] = unit
    return allocate(parse_plan(raw)).tables[0]


# (id, accounting → mechanism, neighbours/unit, samples per input)
CASES = [
    ("pure-discrete_laplace", {"accounting": "pure", "epsilon": 1.0}, "add_remove", None, 20_000),
    ("pure-replace", {"accounting": "pure", "epsilon": 1.0}, "replace", None, 40_000),
    ("pure-household", {"accounting": "pure", "epsilon": 1.0}, "add_remove", HOUSEHOLD, 20_000),
    # 200 tables: the advanced composition theorem really sets each table's ε (≈ 0.37).
    (
        "advanced-discrete_laplace",
        {"accounting": "advanced", "epsilon": 60.0, "delta": 1e-6},
        "add_remove",
        200,
        60_000,
    ),
    (
        "approx-discrete_gaussian",
        {"accounting": "approx", "epsilon": 8.0, "delta": 1e-6},
        "add_remove",
        None,
        12_000,
    ),
    (
        "approx-replace",
        {"accounting": "approx", "epsilon": 8.0, "delta": 1e-6},
        "replace",
        None,
        12_000,
    ),
    # the continuous Gaussian: no longer a count table's noise, still the sums' under approx
    (
        "continuous-gaussian",
        {"accounting": "approx", "epsilon": 8.0, "delta": 1e-6},
        "add_remove",
        "continuous",
        12_000,
    ),
    (
        "zcdp-discrete_gaussian",
        {"accounting": "zcdp", "rho": 0.5, "delta": 1e-10},
        "add_remove",
        None,
        20_000,
    ),
    ("zcdp-replace", {"accounting": "zcdp", "rho": 1.0, "delta": 1e-10}, "replace", None, 20_000),
    (  # issue 36: the Rényi accountant draws zCDP's discrete Gaussian from the same shares
        "renyi-discrete_gaussian",
        {"accounting": "renyi", "rho": 0.5, "delta": 1e-10},
        "add_remove",
        None,
        20_000,
    ),
    (
        "zcdp-household",
        {"accounting": "zcdp", "rho": 2.0, "delta": 1e-10},
        "add_remove",
        HOUSEHOLD,
        10_000,
    ),
]


def _case_table(budget, neighbors, extra):
    if extra == "continuous":
        table = _table(budget, neighbors)
        sigma = gaussian_sigma(budget["epsilon"], budget["delta"], 1.0)
        noise = Noise(GAUSSIAN.name, sigma)
        return replace(table, noise=noise, epsilon=budget["epsilon"], delta=budget["delta"])
    if isinstance(extra, int):
        return _table(budget, neighbors, tables=extra)
    return _table(budget, neighbors, unit=extra)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("budget", "neighbors", "extra", "samples"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_audit_passes_and_catches_scale_times_0_8(budget, neighbors, extra, samples):
    table = _case_table(budget, neighbors, extra)
    honest = audit_table(table, samples)
    assert not honest.violated, honest
    under = audit_table(table, samples, scale_factor=0.8)
    assert under.violated, f"the audit has no power against scale × 0.8: {under}"


def test_every_mechanism_allocate_can_choose_is_audited():
    audited = {
        _case_table(budget, neighbors, extra).noise.mechanism
        for _, budget, neighbors, extra, _ in CASES
    }
    from dprelease.accounting.accountants.registry import ACCOUNTANTS
    from dprelease.accounting.mechanisms import MECHANISMS

    assert {a.mechanism.name for a in ACCOUNTANTS.values()} <= audited
    assert audited == set(MECHANISMS)  # every registered mechanism, not only today's choices
    assert {c[1]["accounting"] for c in CASES} == set(ACCOUNTANTS)


def test_neighbouring_shift_has_the_table_sensitivity():
    for sens in (Sensitivity(1, 1), Sensitivity(3, 9), Sensitivity(2, 2), Sensitivity(6, 18)):
        shift = neighbouring_shift(sens)
        assert int(np.abs(shift).sum()) == sens.l1
        assert int((shift**2).sum()) == sens.l2_squared


def test_gaussian_claim_is_the_calibrated_noise():
    table = _case_table(
        {"accounting": "approx", "epsilon": 1.0, "delta": 1e-6}, "add_remove", "continuous"
    )
    claim = claim_of(table)
    mu = 1 / table.noise.scale
    assert f"μ = {mu:.4g}" in claim.description
    # The closed form agrees with the library's Balle–Wang δ (an independent formula).
    for epsilon in (0.1, 0.5, 1.0, 2.0):
        expected = gaussian_delta(table.noise.scale, epsilon, 1.0)
        assert gdp_delta(mu, np.array([epsilon]))[0] == pytest.approx(expected, rel=1e-6)


def testdiscrete_gaussian_profile_is_within_what_rho_promises():
    """The exact profile never exceeds the CKS conversion of ρ; for large σ it is Gaussian."""
    rho = 0.5
    epsilons = np.array([0.5, 1.0, 2.0, 3.0])
    profile = discrete_gaussian_profile(1.0, np.array([1]), epsilons)
    for epsilon, delta in zip(epsilons, profile, strict=True):
        assert zcdp_to_epsilon(rho, float(delta))[0] >= epsilon - 1e-9
    wide = discrete_gaussian_profile(40.0, np.array([1]), np.array([0.01]))[0]
    assert wide == pytest.approx(gdp_delta(1 / 40, np.array([0.01]))[0], rel=1e-3)
    two_cells = discrete_gaussian_profile(40.0, np.array([1, -1]), np.array([0.01]))[0]
    assert two_cells == pytest.approx(gdp_delta(math.sqrt(2) / 40, np.array([0.01]))[0], rel=1e-3)


def test_audit_with_a_fast_sampler_detects_a_broken_mechanism():
    """The estimator on its own: a sampler that ignores its scale entirely is caught."""
    table = _table({"accounting": "pure", "epsilon": 1.0})
    rng = np.random.default_rng(5)

    def too_little_noise(counts, noise, sens):
        return counts + preview_noise(type(noise)(noise.mechanism, 0.5), counts.size, rng)

    result = audit_table(table, 5_000, sampler=too_little_noise)
    assert result.violated and result.epsilon_lower > 1.5
