"""Statistical tests of every sampler: the sample fits the declared distribution (fit) and
rejects the same distribution at scale × 0.7 and × 1.3 (power).

The secure sampler cannot be seeded (that is its point), so its tests use a threshold of
p = 1e-6: a false alarm once in a million runs; the power checks use the same threshold.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dprelease.accounting.mechanisms import Noise
from dprelease.release.noise import preview_noise, secure_noisy_counts

THRESHOLD = 1e-6
SAMPLES = 20_000


def _discrete_cdf(noise: Noise):
    if noise.mechanism == "discrete_laplace":
        p = math.exp(-1 / noise.scale)

        def cdf(k: np.ndarray) -> np.ndarray:
            k = np.floor(k)
            return np.where(k >= 0, 1 - p ** (k + 1) / (1 + p), p ** (-k) / (1 + p))

        return cdf
    span = int(noise.scale * 40) + 10
    support = np.arange(-span, span + 1)
    pmf = np.exp(-(support.astype(float) ** 2) / (2 * noise.scale**2))
    cumulative = np.cumsum(pmf / pmf.sum())

    def cdf(k: np.ndarray) -> np.ndarray:
        index = np.clip(np.floor(k).astype(int) + span, -1, 2 * span)
        return np.where(index < 0, 0.0, cumulative[np.maximum(index, 0)])

    return cdf


def _cdf(noise: Noise):
    if noise.mechanism == "gaussian":
        return lambda x: stats.norm.cdf(x, scale=noise.scale)
    return _discrete_cdf(noise)


def _bin_edges(noise: Noise) -> np.ndarray:
    """About 40 bins that are equally likely under the declared distribution."""
    quantiles = stats.norm.ppf(np.linspace(0.0125, 0.9875, 40)) * noise.std
    discrete = noise.mechanism != "gaussian"
    edges = np.unique(np.round(quantiles)) + 0.5 if discrete else quantiles  # between integers
    return np.concatenate([[-np.inf], edges, [np.inf]])


def chi_square_p(sample: np.ndarray, declared: Noise, candidate: Noise) -> float:
    """p-value of the sample against `candidate`, binned by the declared distribution."""
    edges = _bin_edges(declared)
    observed, _ = np.histogram(sample, bins=edges)
    cdf = _cdf(candidate)
    probabilities = np.diff(np.concatenate([[0.0], cdf(edges[1:-1]), [1.0]]))
    expected = probabilities * sample.size
    keep = expected > 0
    statistic = float(((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum())
    return float(stats.chi2.sf(statistic, keep.sum() - 1))


CASES = [
    Noise("discrete_laplace", 0.8),
    Noise("discrete_laplace", 13.0),
    Noise("discrete_gaussian", 1.5),
    Noise("discrete_gaussian", 40.0),
    Noise("gaussian", 3.0),
]


def _secure_sample(noise: Noise) -> np.ndarray:
    return secure_noisy_counts(np.zeros(SAMPLES, dtype=np.int64), noise, l1=1, l2_squared=1)


def _preview_sample(noise: Noise) -> np.ndarray:
    return preview_noise(noise, SAMPLES, np.random.default_rng(20261121))


@pytest.mark.parametrize("sampler", [_secure_sample, _preview_sample], ids=["secure", "preview"])
@pytest.mark.parametrize("noise", CASES, ids=lambda n: f"{n.mechanism}-{n.scale:g}")
def test_sampler_fits_and_has_power(sampler, noise):
    sample = sampler(noise)
    assert chi_square_p(sample, noise, noise) > THRESHOLD
    for factor in (0.7, 1.3):
        wrong = Noise(noise.mechanism, noise.scale * factor)
        assert chi_square_p(sample, noise, wrong) < THRESHOLD, f"no power against × {factor}"


@pytest.mark.parametrize("noise", CASES, ids=lambda n: f"{n.mechanism}-{n.scale:g}")
def test_secure_sample_std_matches_declared_noise_std(noise):
    sample = _secure_sample(noise).astype(float)
    # the sample std of 20,000 draws is within 5 % of the declared std (≈ 7 standard errors)
    assert sample.std() == pytest.approx(noise.std, rel=0.05)
    assert abs(sample.mean()) < 6 * noise.std / math.sqrt(SAMPLES)


def test_secure_noise_is_fresh_each_time():
    noise = Noise("discrete_gaussian", 5.0)
    first, second = _secure_sample(noise), _secure_sample(noise)
    assert not np.array_equal(first, second)


def test_secure_sampler_adds_noise_to_the_given_counts():
    counts = np.array([0, 1000, 10**9], dtype=np.int64)
    noisy = secure_noisy_counts(counts, Noise("discrete_laplace", 0.5), l1=1, l2_squared=1)
    assert noisy.dtype == np.int64
    assert np.all(np.abs(noisy - counts) < 60)
