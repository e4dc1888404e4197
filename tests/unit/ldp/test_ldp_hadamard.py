"""Hadamard response's general variant (issue 38.4): exact ε-LDP from its own probability
table, the sampler against that table, unbiased estimates with the stated exact variance, the
one-bit variant kept at ε ≤ 1, and the planner comparing it; pure-ldp as an oracle if present."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dprelease.ldp import PROTOCOLS, plan_ldp
from dprelease.ldp.base import Support
from dprelease.ldp.hadamard import BlockSupport, hadamard_blocks

HR = PROTOCOLS["HR"]


def one_bit(epsilon: float) -> float:
    """The one-bit variant's variance per respondent, (e^ε+1)²/(e^ε−1)²."""
    e = math.exp(epsilon)
    return (e + 1) ** 2 / (e - 1) ** 2


@pytest.mark.parametrize("d", [2, 3, 5, 7, 12, 20, 33])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 1.7, 3.0, 5.0, 8.0])
def test_the_table_is_exactly_epsilon_ldp_and_tight(d, epsilon):
    """max over inputs x, x' and outputs y of P[x, y]/P[x', y] is e^ε, from the table the
    randomiser is checked against below."""
    table = HR.output_distribution(epsilon, d)
    blocks = HR.blocks(epsilon, d)
    assert table.shape == (d, blocks.outputs)
    assert np.allclose(table.sum(axis=1), 1.0, atol=1e-12)
    ratio = float(np.max(table.max(axis=0) / table.min(axis=0)))
    assert ratio == pytest.approx(math.exp(epsilon), rel=1e-9)
    # every value owns b/2 outputs of its block, each e^ε times as likely as any other output
    high = np.isclose(table, table.max(axis=1, keepdims=True))
    assert np.all(high.sum(axis=1) == blocks.size // 2)


@pytest.mark.parametrize(("d", "epsilon"), [(5, 3.0), (12, 2.5), (20, 2.0), (6, 1.0)])
def test_the_sampler_draws_from_the_table(d, epsilon):
    """χ² goodness of fit per input; the same test rejects the table at ε × 1.3 (power)."""
    rng, n = np.random.default_rng(11), 60_000
    table = HR.output_distribution(epsilon, d)
    wrong = HR.output_distribution(epsilon * 1.3, d)
    for x in range(d):
        reports = HR.randomise(np.full(n, x), epsilon, d, rng)[0]
        observed = np.bincount(reports, minlength=table.shape[1])
        assert stats.chisquare(observed, n * table[x]).pvalue > 1e-4, x
        if wrong.shape == table.shape:  # the layout may change with ε
            assert stats.chisquare(observed, n * wrong[x]).pvalue < 1e-6


def collections(d: int, epsilon: float, counts: np.ndarray, runs: int) -> np.ndarray:
    values = np.repeat(np.arange(d), counts)
    rng = np.random.default_rng(d * 1000 + round(epsilon * 10))
    batch = np.ascontiguousarray(np.broadcast_to(values, (runs // 4, len(values))))
    return np.concatenate([HR.estimate_counts(batch, epsilon, d, rng) for _ in range(4)])


@pytest.mark.parametrize(("d", "epsilon"), [(20, 2.0), (30, 3.0), (10, 5.0), (9, 0.7)])
def test_estimates_are_unbiased_with_the_exact_variance(d, epsilon):
    """1,600 collections of n ≈ 6,000 skewed answers: each count's mean within 5 standard
    errors, its empirical variance within the χ² interval of `count_variances` (which counts
    the respondents of the value's block), and the layouts cover m = 1, 1 < m < d and B = 1."""
    runs = 1_600
    weights = 1 / np.arange(1, d + 1)
    counts = np.round(6_000 * weights / weights.sum()).astype(np.int64)
    counts[d // 2] = 0  # a value nobody holds
    estimates = collections(d, epsilon, counts, runs)
    exact = HR.count_variances(epsilon, d, counts)
    low = stats.chi2.ppf(1e-5, runs - 1) / (runs - 1)
    high = stats.chi2.ppf(1 - 1e-5, runs - 1) / (runs - 1)
    ratios = estimates.var(axis=0, ddof=1) / exact
    assert np.all((low < ratios) & (ratios < high)), ratios
    assert np.all(np.abs(estimates.mean(axis=0) - counts) < 5 * np.sqrt(exact / runs))
    # the exact variances are not those of spreading the others evenly unless m = 1 or B = 1
    blocks = HR.blocks(epsilon, d)
    stated = [HR.probabilities(epsilon, d).variance_exact(int(counts.sum()), c) for c in counts]
    if blocks.per_block in (1, d):
        assert np.allclose(exact, stated, rtol=1e-12)
    else:
        assert not np.allclose(exact, stated, rtol=1e-3)


def test_layouts_of_the_cases_above():
    assert hadamard_blocks(2.0, 20).count > 1 and 1 < hadamard_blocks(2.0, 20).per_block < 20
    assert hadamard_blocks(3.0, 30).count > 1 and 1 < hadamard_blocks(3.0, 30).per_block < 30
    assert hadamard_blocks(5.0, 10).per_block == 1
    assert hadamard_blocks(0.7, 9).count == 1


@pytest.mark.parametrize("d", [7, 64, 100, 1000])
@pytest.mark.parametrize("epsilon", [1.5, 3.0])
def test_the_stated_figure_is_a_zero_count_among_even_others(d, epsilon):
    """variance(n) = the exact variance of a value nobody holds, the others holding n/(d−1)."""
    n = 1000 * (d - 1)
    counts = np.full(d, 1000.0)
    counts[0] = 0
    assert HR.probabilities(epsilon, d).variance(n) == pytest.approx(
        HR.count_variances(epsilon, d, counts)[0], rel=1e-12
    )


def test_the_one_bit_variant_below_epsilon_one_and_blocks_above():
    for d in range(3, 2001, 7):
        for epsilon in (0.05, 0.5, 0.9, 1.0):
            assert hadamard_blocks(epsilon, d).count == 1, (d, epsilon)
            support = HR.probabilities(epsilon, d)
            assert type(support) is Support  # exactly the one-bit variant's p and q*
            assert support.variance(1) == pytest.approx(one_bit(epsilon), rel=1e-12)
    for d in (3, 10, 100, 1000, 100_000):
        for epsilon in np.linspace(0.05, 9, 40):
            assert HR.probabilities(epsilon, d).variance(1) <= one_bit(epsilon) * (1 + 1e-12)
    # the figures: at d = 100 the one-bit variant had 2.9× the variance at ε = 3
    assert one_bit(3.0) / HR.probabilities(3.0, 100).variance(1) > 2.8
    assert one_bit(5.0) / HR.probabilities(5.0, 100).variance(1) > 30
    assert isinstance(HR.probabilities(3.0, 100), BlockSupport)


@pytest.mark.parametrize("epsilon", [4.0, 6.0, 8.0])
def test_large_epsilon_scales_as_e_to_minus_epsilon_near_oue(epsilon):
    """For large d: about 8/e^ε per respondent, within 2.1× OUE's 4e^ε/(e^ε−1)²."""
    d = 100_000
    variance = HR.probabilities(epsilon, d).variance(1)
    assert 0.9 < variance * math.exp(epsilon) / 8 < 1.1
    assert variance < 2.1 * PROTOCOLS["OUE"].probabilities(epsilon, d).variance(1)


def test_the_planner_lists_the_general_variant():
    plan = plan_ldp(3.0, 1000, 10_000)
    listed = next(p for p in plan.protocols if p.name == "HR")
    assert listed.variance == pytest.approx(HR.probabilities(3.0, 1000).variance(10_000))
    assert listed.variance < 10_000 * one_bit(3.0) / 2.8
    assert set(plan.to_dict()["protocols"][-1]) == {"name", "variance", "moe"}  # the contract


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 3.0, 5.0, 7.0])
@pytest.mark.parametrize("d", [10, 100, 1000, 10_000])
def test_the_planner_picks_hadamard_response_where_its_variance_is_least(monkeypatch, epsilon, d):
    """Among the protocols with short reports (OUE sends d bits, OLH a 64-bit seed), HR is
    chosen wherever its general variant has the least variance; at ε ≤ 1 it never has."""
    short = {name: PROTOCOLS[name] for name in ("GRR", "BLH", "HR")}
    monkeypatch.setattr("dprelease.ldp.planner.PROTOCOLS", short)
    plan = plan_ldp(epsilon, d, 10_000)
    least = min(plan.protocols, key=lambda p: p.variance)
    assert plan.best == least.name
    if epsilon <= 1:
        assert plan.best != "HR"
    if (epsilon, d) in {(3.0, 1000), (3.0, 10_000), (5.0, 10_000), (7.0, 10_000)}:
        assert plan.best == "HR"


def test_one_million_respondents_are_fast():
    import time

    values = np.random.default_rng(0).integers(0, 100, 1_000_000)
    start = time.process_time()
    estimates = HR.estimate_counts(values, 3.0, 100, np.random.default_rng(1))
    assert time.process_time() - start < 2.0  # about 0.1 s alone
    truth = np.bincount(values, minlength=100)
    assert np.max(np.abs(estimates - truth)) < 6 * math.sqrt(
        HR.count_variances(3.0, 100, truth).max()
    )


# --- pure-ldp as an oracle (a dev dependency only; skipped without it) ----------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0, 5.0])
@pytest.mark.parametrize("d", [100, 20])
@pytest.mark.filterwarnings("ignore:non-integer arguments to randrange:DeprecationWarning")
def test_variance_no_worse_than_pure_ldps_hadamard_response(d, epsilon):
    """pure-ldp's HadamardResponse (the paper's authors' code; above ε = 1 its blocks are
    B = 2^⌊log₂ min(2d, e^ε)⌋) on the same data: its mean squared error per count over two
    collections is at least our exact variance, up to 3 standard errors."""
    hadamard = pytest.importorskip("pure_ldp.frequency_oracles.hadamard_response")
    import random

    n = 10_000
    weights = 1 / np.arange(1, d + 1) ** 1.1
    values = np.random.default_rng(3).choice(d, size=n, p=weights / weights.sum())
    truth = np.bincount(values, minlength=d)
    squared = []
    for seed in range(2):
        random.seed(seed)
        np.random.seed(seed)
        server = hadamard.HadamardResponseServer(epsilon, d)
        client = hadamard.HadamardResponseClient(epsilon, d, server.get_hash_funcs())
        server.aggregate_all([client.privatise(int(v) + 1) for v in values])
        squared.append((server.estimate_all(range(1, d + 1), suppress_warnings=True) - truth) ** 2)
    errors = np.concatenate(squared)
    ours = HR.count_variances(epsilon, d, truth).mean()
    assert ours <= errors.mean() + 3 * errors.std(ddof=1) / math.sqrt(len(errors))
