"""Accounting against the independent reference numbers in shared/design/ORACLES.md."""

import math

import pytest

from dprelease.accounting.composition import (
    advanced_composition_epsilon,
    advanced_or_basic,
    basic_composition,
    epsilon_to_zcdp,
    kov_bound_epsilon,
    kov_epsilon,
    pure_to_zcdp,
    zcdp_guarantee,
    zcdp_to_epsilon,
)

REL = 1e-4

CKS_TABLE = [
    (0.0749437, {1e-10: 2.474671, 1e-6: 1.831390, 1e-5: 1.633038}),
    (0.5, {1e-10: 6.839329, 1e-6: 5.221534, 1e-5: 4.728387}),
    (1.0, {1e-10: 10.034344, 1e-6: 7.766217, 1e-5: 7.077197}),
    (2.5562256, {1e-10: 17.143551, 1e-6: 13.555607, 1e-5: 12.469947}),
]


@pytest.mark.parametrize(("rho", "expected"), CKS_TABLE)
def test_zcdp_to_epsilon_matches_cks_oracle(rho, expected):
    for delta, epsilon in expected.items():
        assert zcdp_to_epsilon(rho, delta)[0] == pytest.approx(epsilon, rel=REL)


def test_census_2020_composition_in_zcdp_beats_adding_epsilons():
    persons, units = (542 / 339) ** 2, (3379 / 12343) ** 2
    assert zcdp_to_epsilon(persons, 1e-10)[0] == pytest.approx(17.143551, rel=REL)
    assert zcdp_to_epsilon(units, 1e-10)[0] == pytest.approx(2.474671, rel=REL)
    combined = zcdp_guarantee([persons, units], 1e-10)
    assert combined.epsilon == pytest.approx(17.435, rel=REL)
    assert combined.epsilon < 17.143551 + 2.474671


def test_gaussian_sigma_two_is_rho_one_eighth():
    rho = 1 / (2 * 2.0**2)
    assert rho == 0.125
    assert zcdp_to_epsilon(rho, 1e-5)[0] == pytest.approx(2.165716, rel=REL)


def test_pure_dp_implies_half_epsilon_squared_zcdp():
    assert pure_to_zcdp(1.0) == 0.5
    assert pure_to_zcdp(0.2) == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("k", "epsilon0", "delta", "advanced", "kov"),
    [
        (10, 0.1, 1e-6, 1.7674, 1.0000),
        (100, 0.1, 1e-6, 6.3082, 5.7561),
        (50, 0.2, 1e-5, 9.0002, 7.7828),
    ],
)
def test_composition_oracles(k, epsilon0, delta, advanced, kov):
    assert basic_composition([epsilon0] * k).epsilon == pytest.approx(k * epsilon0, rel=REL)
    assert advanced_composition_epsilon([epsilon0] * k, delta) == pytest.approx(advanced, rel=REL)
    assert kov_bound_epsilon(epsilon0, k, delta) == pytest.approx(kov, rel=REL)
    # the exact optimal composition is never looser than its closed-form bound
    assert kov_epsilon(epsilon0, k, delta) <= kov_bound_epsilon(epsilon0, k, delta)


def test_dwork_lifetime_example():
    # 10,000 queries with lifetime (1, e^-32)-DP allow ε0 = 0.00123104 (by the formula).
    epsilon0 = 0.00123104
    assert advanced_composition_epsilon([epsilon0] * 10_000, math.exp(-32)) == pytest.approx(
        1.0, rel=1e-4
    )


def test_advanced_reports_basic_where_tighter():
    few = advanced_or_basic([0.1] * 10, 1e-6)
    assert few.composition == "basic" and few.epsilon == pytest.approx(1.0) and few.delta == 0
    many = advanced_or_basic([0.1] * 100, 1e-6)
    assert many.composition == "advanced" and many.epsilon == pytest.approx(6.3082, rel=REL)
    assert many.delta == 1e-6


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 3.0, 19.61])
@pytest.mark.parametrize("delta", [1e-12, 1e-10, 1e-5])
def test_epsilon_to_zcdp_is_the_largest_rho_within_epsilon(epsilon, delta):
    rho, _ = epsilon_to_zcdp(epsilon, delta)
    assert zcdp_to_epsilon(rho, delta)[0] <= epsilon
    assert zcdp_to_epsilon(rho * (1 + 1e-6), delta)[0] > epsilon * (1 - 1e-9)


def test_basic_composition_is_exact_not_floating():
    # 0.1 + 0.2 > 0.3 in floats; the exact sum of the floats is reported rounded up.
    total = basic_composition([0.1, 0.2]).epsilon
    assert total >= 0.1 + 0.2 - 1e-17


@pytest.mark.parametrize("rho", [1e-8, 1e-4, 0.0132, 0.5, 20.0, 1e4])
@pytest.mark.parametrize("delta", [1e-15, 1e-10, 1e-5, 0.3])
def test_best_cks_order_is_the_minimum_over_a_fine_grid(rho, delta):
    # The Newton root of the derivative against brute force: 20,001 orders on a log grid.
    from dprelease.accounting.composition import _best_alpha, cks_estimate_at

    log_inv = math.log(1 / delta)
    grid = [1 + 10 ** (k / 1000) for k in range(-9000, 12001)]
    brute = min(cks_estimate_at(a, rho, log_inv) for a in grid)
    found = cks_estimate_at(_best_alpha(rho, log_inv), rho, log_inv)
    assert found <= brute + 1e-12 * max(1.0, abs(brute))
