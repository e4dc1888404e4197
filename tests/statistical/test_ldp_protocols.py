"""Local-DP protocols: exact ε-LDP by enumeration, the samplers against their declared
distributions, unbiased estimators, and each closed-form variance against 2,000 simulated
collections of n = 10,000 (χ² interval, with its power stated)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from scipy import stats

from dprelease.ldp import PROTOCOLS, DuchiMean, OneBitMean
from dprelease.ldp.hashing import bucket

EPSILONS = [0.1, 0.7, 1.0, 2.5, 5.0]
TIGHT = 1e-9  # relative float tolerance on a likelihood ratio


def worst_ratio(table: np.ndarray) -> float:
    """max over inputs x, x' and outputs y of P[x, y] / P[x', y]."""
    return float(np.max(table.max(axis=0) / table.min(axis=0)))


@pytest.mark.parametrize("name", list(PROTOCOLS))
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_every_randomiser_is_exactly_epsilon_ldp_and_tight(name, epsilon, d):
    table = PROTOCOLS[name].output_distribution(epsilon, d)
    assert np.allclose(table.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(table > 0)
    ratio = worst_ratio(table)
    assert ratio <= math.exp(epsilon) * (1 + TIGHT)
    assert ratio >= math.exp(epsilon) * (1 - TIGHT)  # no budget left unused


@pytest.mark.parametrize("mechanism", [OneBitMean(upper=7.0), DuchiMean()])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_mean_randomisers_are_exactly_epsilon_ldp(mechanism, epsilon):
    low, high = (0.0, 7.0) if isinstance(mechanism, OneBitMean) else (-1.0, 1.0)
    table = mechanism.output_distribution(np.linspace(low, high, 41), epsilon)
    assert np.allclose(table.sum(axis=1), 1.0)
    assert worst_ratio(table) == pytest.approx(math.exp(epsilon), rel=TIGHT)


@pytest.mark.parametrize("name", ["GRR", "SUE", "OUE", "HR"])
def test_sampler_output_frequencies_fit_the_enumerated_distribution(name):
    """Ties the enumeration to the code that samples: χ² goodness of fit per input, and the
    same test rejects the distribution of ε ÷ 1.3 (power; above ε = 1, HR may change its
    blocks, and with them its outputs)."""
    protocol, epsilon, d, n = PROTOCOLS[name], 1.0, 3, 60_000
    rng = np.random.default_rng(17)
    for x in range(d):
        reports = protocol.randomise(np.full(n, x), epsilon, d, rng)[0]
        if reports.ndim == 2:  # unary: a bit vector read as a binary number, bit v = 2^v
            reports = reports @ (1 << np.arange(d))
        table = protocol.output_distribution(epsilon, d)
        observed = np.bincount(reports, minlength=table.shape[1])
        assert stats.chisquare(observed, n * table[x]).pvalue > 1e-4
        wrong = protocol.output_distribution(epsilon / 1.3, d)[x]
        assert stats.chisquare(observed, n * wrong).pvalue < 1e-6


@pytest.mark.parametrize("name", ["BLH", "OLH"])
def test_hashing_keeps_the_hashed_bucket_with_probability_p(name):
    protocol, epsilon, d, n = PROTOCOLS[name], 2.0, 6, 200_000
    seeds, reported = protocol.randomise(np.full(n, 4), epsilon, d, np.random.default_rng(3))
    kept = np.count_nonzero(reported == bucket(seeds, 4, protocol.probabilities(epsilon, d).g))
    p = protocol.probabilities(epsilon, d).p
    assert abs(kept - n * p) < 5 * math.sqrt(n * p * (1 - p))
    # The hash spreads the value uniformly: buckets of other values hit 1/g of the time.
    g = protocol.probabilities(epsilon, d).g
    hits = np.count_nonzero(bucket(seeds, 2, g) == reported)
    q = protocol.probabilities(epsilon, d).q
    assert abs(hits - n * q) < 5 * math.sqrt(n * q * (1 - q))


def test_estimators_are_exactly_unbiased_in_expectation():
    """ĉ is linear in I_v and E[I_v] = n_v·p + (n − n_v)·q*, so E[ĉ] = n_v exactly."""
    true = np.array([0, 13, 250, 737])
    n = int(true.sum())
    for protocol in PROTOCOLS.values():
        s = protocol.probabilities(1.3, 4)
        expected_support = true * s.p + (n - true) * s.q
        assert np.allclose(s.estimate(expected_support, n), true, rtol=0, atol=1e-9)


TRUE_COUNTS = np.array([0, 3_000, 5_000, 1_500, 500])  # n = 10,000; value 0 has count 0
COLLECTIONS = 2_000
CHI2_TAIL = 1e-5  # per side and check


def chi2_interval(df: int) -> tuple[float, float]:
    """Where s²/σ² falls with probability 1 − 2·CHI2_TAIL for normal estimates."""
    return (
        stats.chi2.ppf(CHI2_TAIL, df) / df,
        stats.chi2.ppf(1 - CHI2_TAIL, df) / df,
    )


def test_the_variance_interval_has_power():
    """The interval the next test uses would reject a variance formula 15% off either way."""
    low, high = chi2_interval(COLLECTIONS - 1)
    assert 0.85 < low < 1 < high < 1.15


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROTOCOLS))
@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_closed_form_variance_matches_2000_simulated_collections(name, epsilon):
    protocol, d = PROTOCOLS[name], len(TRUE_COUNTS)
    n = int(TRUE_COUNTS.sum())
    values = np.repeat(np.arange(d), TRUE_COUNTS)
    rng = np.random.default_rng(zlib.crc32(f"{name} {epsilon}".encode()))
    # 20 M reports at once took a test worker 0.9 GB above its size; a few hundred
    # collections at a time give the same draws' law in an eighth of the memory.
    chunk = np.ascontiguousarray(np.broadcast_to(values, (COLLECTIONS // 8, n)))
    estimates = np.concatenate([protocol.estimate_counts(chunk, epsilon, d, rng) for _ in range(8)])
    support = protocol.probabilities(epsilon, d)
    low, high = chi2_interval(COLLECTIONS - 1)
    for value, count in enumerate(TRUE_COUNTS):
        exact = support.variance_exact(n, count)
        empirical = estimates[:, value].var(ddof=1)
        assert low < empirical / exact < high, (value, empirical / exact)
        # unbiased: the mean of 2,000 estimates within 5 standard errors of the truth
        assert abs(estimates[:, value].mean() - count) < 5 * math.sqrt(exact / COLLECTIONS)
    # The contract's figure, for the value whose true count is 0, is the exact form there.
    assert support.variance(n) == pytest.approx(support.variance_exact(n, 0), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_mean_protocols_are_unbiased_with_their_exact_variance(epsilon):
    rng = np.random.default_rng(5)
    n = 10_000
    x = rng.uniform(0, 7, size=n)
    one_bit, duchi = OneBitMean(upper=7.0), DuchiMean()
    batch = np.broadcast_to(x, (COLLECTIONS, n))
    means = one_bit.estimate_mean(one_bit.randomise(batch, epsilon, rng), epsilon)
    exact = one_bit.variance(x, epsilon)
    low, high = chi2_interval(COLLECTIONS - 1)
    assert low < means.var(ddof=1) / exact < high
    assert abs(means.mean() - x.mean()) < 5 * math.sqrt(exact / COLLECTIONS)
    assert exact <= one_bit.variance_bound(n, epsilon)
    scaled = 2 * x / 7 - 1  # the same mechanism on [−1, 1]: variance scales by (7/2)²
    assert exact == pytest.approx(duchi.variance(scaled, epsilon) * (7 / 2) ** 2, rel=1e-12)
    reports = duchi.randomise(np.broadcast_to(scaled, (COLLECTIONS, n)), epsilon, rng)
    duchi_means = duchi.estimate_mean(reports)
    assert low < duchi_means.var(ddof=1) / duchi.variance(scaled, epsilon) < high


def test_closed_forms_equal_wang_et_al():
    e = math.exp(1.2)
    n, d = 1000, 9
    forms = {
        "GRR": n * (d - 2 + e) / (e - 1) ** 2,
        "SUE": n * math.exp(0.6) / (math.exp(0.6) - 1) ** 2,
        "OUE": n * 4 * e / (e - 1) ** 2,
        "BLH": n * (e + 1) ** 2 / (e - 1) ** 2,
        "HR": n * (e + 1) ** 2 / (e - 1) ** 2,
    }
    g = round(e) + 1
    forms["OLH"] = n * (e + g - 1) ** 2 / ((e - 1) ** 2 * (g - 1))
    for name, value in forms.items():
        assert PROTOCOLS[name].probabilities(1.2, d).variance(n) == pytest.approx(value)
    assert PROTOCOLS["OLH"].probabilities(1.2, d).g == g == 4
