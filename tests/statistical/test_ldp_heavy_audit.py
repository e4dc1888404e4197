"""Privacy audits of the local-DP heavy-hitter and itemset randomisers (method:
tests/helpers/audit.py): each respondent's output on two different answers, drawn by the
real code, against the claim ε-LDP; the same audit catches the randomiser at 1.5·ε (power).
And the heavy-hitter margins: unbiased estimates, variance as stated, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dprelease.ldp import linear_hashing
from dprelease.ldp.heavy_hitters import MASK, heavy_hitters, respond
from dprelease.ldp.itemsets import _best_protocol, _padded_sample
from dprelease.ldp.prefix import encode, prefix_fingerprints
from dprelease.ldp.registry import protocol
from helpers.audit import Claim, audit_losses
from helpers.stats_audit import audit_outputs

SAMPLES = 20_000


def heavy_hitter_audit(epsilon: float, drawn_at: float, seed: int):
    """Outputs (level, hash matrix A, bucket y) for x = "apple" and x' = "apricot" (8 bytes:
    levels 1–2 share the prefix, the other six differ); loss of the declared ε-LDP
    distribution (GRR over g buckets given A): ε·(1[y = A·h_s(x)] − 1[y = A·h_s(x')])."""
    prints = prefix_fingerprints(encode(["apple", "apricot"], 8))
    hashed = (prints & MASK).astype(np.int64)  # (2 values, 8 levels)
    rng = np.random.default_rng(seed)
    losses = []
    for code in (0, 1):
        levels, matrices, reported = respond(prints, np.full(SAMPLES, code), drawn_at, rng)
        of_x = linear_hashing.hash_values(matrices, hashed[0, levels]) == reported
        of_x_prime = linear_hashing.hash_values(matrices, hashed[1, levels]) == reported
        losses.append(epsilon * (of_x.astype(float) - of_x_prime.astype(float)))
    claim = Claim(np.array([epsilon]), np.array([0.0]), f"{epsilon:g}-LDP")
    return audit_losses(losses[0], losses[1], [epsilon / 2], claim)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_each_heavy_hitter_respondent_is_epsilon_ldp(epsilon):
    result = heavy_hitter_audit(epsilon, epsilon, seed=int(10 * epsilon))
    assert not result.violated, result


def test_the_heavy_hitter_audit_catches_a_randomiser_at_one_and_a_half_epsilon():
    result = heavy_hitter_audit(1.0, 1.5, seed=99)
    assert result.violated, result


def itemset_audit(epsilon: float, drawn_at: float, seed: int):
    """The items phase: answers S = {0, 1} and S' = {2} among 3 candidates (dummy 3), padded
    to 2 and sampled by the real code, reported by the protocol the real code picks (GRR
    for 4 values at ε = 2). Declared P[y | S] = Σ_x P[x | S]·GRR_ε[x, y]."""
    name = _best_protocol(epsilon, 4, SAMPLES)
    assert name == "GRR"
    table = protocol(name).output_distribution(epsilon, 4)
    rng = np.random.default_rng(seed)
    held = [[0, 1], [2]]
    outputs = []
    for code in (0, 1):
        sampled = _padded_sample(held, np.full(SAMPLES, code), 2, 3, rng)
        outputs.append(protocol(name).randomise(sampled, drawn_at, 4, rng)[0].tolist())
    p = dict(enumerate(0.5 * table[0] + 0.5 * table[1]))
    p_prime = dict(enumerate(0.5 * table[2] + 0.5 * table[3]))
    claim = Claim(np.array([epsilon]), np.array([0.0]), f"{epsilon:g}-LDP")
    return audit_outputs(outputs[0], outputs[1], p, p_prime, claim)


def test_each_itemset_respondent_is_epsilon_ldp():
    assert not itemset_audit(2.0, 2.0, seed=5).violated


def test_the_itemset_audit_catches_a_randomiser_at_one_and_a_half_epsilon():
    assert itemset_audit(2.0, 3.0, seed=6).violated


@pytest.mark.slow
def test_heavy_hitter_estimates_are_unbiased_with_the_stated_variance_and_coverage():
    """30 collections of 40,000 respondents, one value held by 12,000: the mean estimate
    within 4 standard errors of the truth, the sample variance inside the χ² interval at
    1e-4 around the stated variance, and ≥ 24 of 30 margins covering the truth."""
    words = ["alpha", "beta"] + [f"z{i}" for i in range(3000)]
    rng = np.random.default_rng(2024)
    codes = np.concatenate([np.zeros(12_000, dtype=np.int64), rng.integers(1, 3002, 28_000)])
    truth = 12_000
    estimates, margins = [], []
    for _ in range(30):
        result = heavy_hitters(words, codes, 3.0, top=1, max_length=5, rng=rng)
        assert result.top[0].value == "alpha"
        estimates.append(result.top[0].estimate)
        margins.append(result.top[0].moe)
    estimates_array = np.array(estimates)
    sd = float(np.mean(margins)) / stats.norm.ppf(0.975)  # the stated sd (plug-in)
    assert abs(estimates_array.mean() - truth) < 4 * sd / math.sqrt(30)
    statistic = 29 * estimates_array.var(ddof=1) / sd**2
    assert stats.chi2.ppf(1e-4, 29) < statistic < stats.chi2.ppf(1 - 1e-4, 29)
    assert np.count_nonzero(np.abs(estimates_array - truth) <= np.array(margins)) >= 24
