"""Privacy maps, inverses, noise std and margins of error, against oracles and OpenDP."""

import math
from fractions import Fraction

import numpy as np
import pytest

from dprelease.accounting.mechanisms import (
    Noise,
    discrete_gaussian_moe,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    discrete_gaussian_tail,
    discrete_gaussian_variance,
    discrete_laplace_moe,
    discrete_laplace_variance,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_moe,
    gaussian_sigma,
    laplace_epsilon,
    laplace_scale,
    mechanism,
)
from dprelease.errors import InternalError

accuracy = pytest.importorskip("opendp.accuracy")


def test_accuracy_oracles():
    assert discrete_laplace_moe(1.0, 0.05) == pytest.approx(3.3756177665957137, rel=1e-12)
    assert gaussian_moe(1.0, 0.05) == pytest.approx(1.959964, rel=1e-6)
    assert 2 / gaussian_moe(1.0, 0.05) == pytest.approx(1.020426913849308, rel=1e-12)
    # simultaneous over k cells: α/k per cell (the discrete Laplace's own tail, as OpenDP's)
    assert Noise("discrete_laplace", 1.0).moe_table(0.05, 2) == pytest.approx(
        discrete_laplace_moe(1.0, 0.025), rel=1e-12
    )


@pytest.mark.parametrize("scale", [0.3, 0.9, 1.0, 2.5, 13.0, 77.7, 1234.5])
@pytest.mark.parametrize("alpha", [0.5, 0.05, 1e-3, 1e-7])
def test_margins_of_error_agree_with_opendp(scale, alpha):
    assert discrete_laplace_moe(scale, alpha) == pytest.approx(
        accuracy.discrete_laplacian_scale_to_accuracy(scale, alpha), rel=1e-9
    )
    assert discrete_gaussian_moe(scale, alpha) == accuracy.discrete_gaussian_scale_to_accuracy(
        scale, alpha
    )
    assert gaussian_moe(scale, alpha) == pytest.approx(
        accuracy.gaussian_scale_to_accuracy(scale, alpha), rel=1e-9
    )


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.0, 7.5, 50.0, 400.0])
def test_discrete_gaussian_tail_matches_direct_sum(sigma):
    xs = np.arange(-int(60 * sigma) - 5, int(60 * sigma) + 6)
    pmf = np.exp(-(xs.astype(float) ** 2) / (2 * sigma**2))
    pmf /= pmf.sum()
    for a in [1, 2, int(sigma), int(2 * sigma) + 1, int(3 * sigma) + 2]:
        direct = pmf[np.abs(xs) >= a].sum()
        assert discrete_gaussian_tail(a, sigma) == pytest.approx(direct, rel=1e-9, abs=1e-300)
    variance = float((pmf * xs.astype(float) ** 2).sum())
    assert discrete_gaussian_variance(sigma) == pytest.approx(variance, rel=1e-9)


@pytest.mark.parametrize("scale", [0.2, 1.0, 3.0, 100.0])
def test_discrete_laplace_variance_is_the_sum_over_its_pmf(scale):
    xs = np.arange(-int(80 * scale) - 50, int(80 * scale) + 51).astype(float)
    pmf = np.exp(-np.abs(xs) / scale)
    pmf /= pmf.sum()
    assert discrete_laplace_variance(scale) == pytest.approx(float((pmf * xs**2).sum()), rel=1e-9)


@pytest.mark.parametrize("epsilon", [1e-4, 0.1, 1 / 3, 0.7, 2.0, 99.0])
@pytest.mark.parametrize("l1", [1, 2, 4])
def test_laplace_scale_never_overspends(epsilon, l1):
    scale = laplace_scale(epsilon, l1)
    assert laplace_epsilon(scale, l1) <= Fraction(epsilon)
    assert (
        laplace_epsilon(math.nextafter(scale, 0), l1) > Fraction(epsilon) or scale == l1 / epsilon
    )


@pytest.mark.parametrize("rho", [1e-5, 0.01, 1 / 3, 0.5, 7.0])
@pytest.mark.parametrize("l2_squared", [1, 2, 16])
def test_discrete_gaussian_sigma_never_overspends(rho, l2_squared):
    sigma = discrete_gaussian_sigma(rho, l2_squared)
    assert discrete_gaussian_rho(sigma, l2_squared) <= Fraction(rho)
    assert sigma == pytest.approx(math.sqrt(l2_squared / (2 * rho)), rel=1e-14)


@pytest.mark.parametrize(
    ("epsilon", "delta", "expected"),
    # Balle & Wang 2018: the analytic Gaussian at ε = 1, δ = 1e-5 needs σ ≈ 3.73
    [(1.0, 1e-5, 3.7306), (0.1, 1e-10, 54.2063), (5.0, 1e-6, 0.98005)],
)
def test_analytic_gaussian_calibration(epsilon, delta, expected):
    sigma = gaussian_sigma(epsilon, delta, 1.0)
    assert sigma == pytest.approx(expected, rel=1e-4)
    assert gaussian_delta(sigma, epsilon, 1.0) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon, 1.0) > delta


def test_analytic_gaussian_beats_the_classical_shortcut_and_is_valid_above_one():
    for epsilon in (0.2, 0.9):
        classical = math.sqrt(2 * math.log(1.25 / 1e-6)) / epsilon
        assert gaussian_sigma(epsilon, 1e-6, 1.0) < classical
    # ε = 4: the shortcut is invalid there; the analytic σ still meets δ exactly
    sigma = gaussian_sigma(4.0, 1e-6, 1.0)
    assert gaussian_delta(sigma, 4.0, 1.0) <= 1e-6


def test_noise_std_per_mechanism():
    assert Noise("discrete_gaussian", 10.0).std == pytest.approx(10.0)
    assert Noise("gaussian", 2.0).std == 2.0
    assert Noise("discrete_laplace", 1.0).std == pytest.approx(math.sqrt(2 * math.e) / (math.e - 1))


def test_an_unknown_mechanism_is_refused_never_priced_as_another():
    # the continuous Laplace was removed (nothing produced it): its name is now unknown
    with pytest.raises(InternalError, match="unknown mechanism 'laplace'"):
        Noise("laplace", 2.0)  # type: ignore[arg-type]
    with pytest.raises(InternalError, match="unknown mechanism"):
        mechanism("exponential")


def test_gaussian_privacy_loss_distribution_oracle():
    # σ = 2, Δ = 1 at δ = 1e-5: PLD gives 1.993091 (zCDP's conversion gives 2.165716)
    assert gaussian_epsilon([2.0], 1e-5, 1.0) == pytest.approx(1.993091, rel=1e-4)
    # two σ = 2√2 Gaussians compose exactly to one σ = 2 Gaussian
    assert gaussian_epsilon([2 * 2**0.5] * 2, 1e-5, 1.0) == pytest.approx(1.993091, rel=1e-4)
