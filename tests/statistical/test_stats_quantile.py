"""Quantiles by the exponential mechanism (dprelease/stats/quantile.py): the hand-computed
5-candidate example, privacy maps and sensitivities against exact oracles, χ² fit and power of
the secure and the preview sampler, the exact error, and a privacy audit on neighbouring data.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dprelease.errors import PlanError
from dprelease.plan.stat_spec import parse_stat
from dprelease.release.stat_noise import SECURE
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.quantile import (
    calibrate_quantile,
    candidates,
    draw_quantiles,
    exact_moe,
    quantile_pmf,
    rank_errors,
    score_sensitivity,
    value_errors,
    zcdp_rho,
)
from dprelease.stats.ranks import integer_scores
from helpers.audit import Claim
from helpers.stats_audit import audit_outputs

THRESHOLD = 1e-6
HALF = Fraction(1, 2)
FIVE = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 3.0])  # the 5-candidate example's data
GRID5 = np.arange(5, dtype=float)  # candidates 0, 1, 2, 3, 4


def _spec(q=0.5, bounds=(0, 4), **extra):
    return parse_stat({"quantile": q, "column": "age", "bounds": list(bounds), **extra}, "t")


def test_five_candidates_match_a_hand_computation():
    # median, ε = 1, add/remove, one row per person: Δ = 1/2, s = 2Δ/ε = 1.
    # c:       0  1  2  3  4
    # #{x<c}:  0  0  2  3  6      #{x>c}: 6  4  3  0  0
    # |½·lt − ½·gt| = 3, 2, ½, 3/2, 3    →  P(c) ∝ e^{−3}, e^{−2}, e^{−1/2}, e^{−3/2}, e^{−3}
    mechanism = calibrate_quantile(_spec(), Share("pure", epsilon=1.0), StatContext())
    assert mechanism.scales == (1.0,)
    weights = [math.exp(-3), math.exp(-2), math.exp(-0.5), math.exp(-1.5), math.exp(-3)]
    expected = [w / sum(weights) for w in weights]
    pmf = quantile_pmf(FIVE, GRID5, HALF, 1.0)
    assert pmf == pytest.approx(expected, rel=1e-12)
    assert pmf[2] == pytest.approx(0.606530660 / 1.064570237, rel=1e-8)  # by hand


def test_scores_agree_with_opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for q in (0.1, 0.25, 0.5, 0.1234, 0.9):
        frac = Fraction(round(q * 10_000), 10_000)
        scorer = dp.t.make_quantile_score_candidates(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.symmetric_distance(),
            candidates=list(GRID5),
            alpha=q,
        )
        theirs = np.array(scorer(list(FIVE)), dtype=float)
        ours = integer_scores(FIVE, GRID5, frac).astype(float)
        assert theirs / theirs.max() == pytest.approx(ours / ours.max())


def _add_remove_neighbours(data, values):
    for i in range(len(data)):
        yield data[:i] + data[i + 1 :]  # remove
    for v in values:
        yield [*data, v]  # add


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(1, 10), Fraction(3, 4)])
def test_score_sensitivity_exact_oracle(q):
    """Brute force over every data set of ≤ 4 values on a 4-point domain and each neighbour."""
    values = [0.0, 1.0, 2.0, 3.0]
    grid = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    add_remove, within = Fraction(0), Fraction(0)
    for size in range(5):
        for data in itertools.combinations_with_replacement(values, size):
            base = rank_errors(np.array(data), grid, q)
            for other in _add_remove_neighbours(list(data), values):
                change = np.abs(rank_errors(np.array(other), grid, q) - base).max()
                add_remove = max(add_remove, Fraction(change).limit_denominator(100))
            for i, v in itertools.product(range(size), values):  # replace one value
                other = [*data[:i], v, *data[i + 1 :]]
                change = np.abs(rank_errors(np.array(other), grid, q) - base).max()
                within = max(within, Fraction(change).limit_denominator(100))
    assert add_remove == score_sensitivity(q, StatContext(1, "add_remove")) == max(q, 1 - q)
    # replace within a group moves the utility by exactly 1, never more than Δ = 2·max(q, 1−q)
    assert within == 1 <= score_sensitivity(q, StatContext(1, "replace"))
    assert score_sensitivity(q, StatContext(3, "add_remove")) == 3 * max(q, 1 - q)


@pytest.mark.parametrize("accounting", ["pure", "approx", "advanced", "zcdp"])
@given(budget=st.floats(0.01, 20), k=st.integers(1, 4), rows=st.integers(1, 5))
@settings(max_examples=40, deadline=None)
def test_cost_never_exceeds_the_share(accounting, budget, k, rows):
    qs = [0.1, 0.5, 0.75, 0.9][:k]
    share = (
        Share(accounting, rho=budget) if accounting == "zcdp" else Share(accounting, budget, 1e-6)
    )
    mech = calibrate_quantile(_spec(qs, (0, 100)), share, StatContext(rows, "add_remove"))
    if accounting == "zcdp":
        rho = sum(zcdp_rho(s, d) for s, d in zip(mech.scales, mech.sensitivities, strict=True))
        assert rho <= Fraction(budget) and mech.cost.rho >= float(rho)
        # ρ = ε²/8 per quantile (bounded range)
        for eps, s, d in zip(mech.epsilons, mech.scales, mech.sensitivities, strict=True):
            assert zcdp_rho(s, d) == eps**2 / 8
    else:
        assert sum(mech.epsilons) <= Fraction(budget)
        assert mech.cost.epsilon >= float(sum(mech.epsilons))
        assert mech.cost.delta == (0.0 if accounting == "approx" else None)


def test_bad_quantiles_are_refused():
    for bad in (0, 1, 1.5, 0.12345, [0.5, 0.25], "half"):
        with pytest.raises(PlanError):
            _spec(bad)
    with pytest.raises(PlanError):
        _spec(0.5, (10, 0))
    with pytest.raises(PlanError):
        _spec(0.5, (0, 1e6), grid_step=1)


def test_grid_is_public_and_within_bounds():
    assert candidates(_spec(0.5, (0, 100))).tolist() == list(range(101))
    grid = candidates(_spec(0.5, (0, 500000)))
    assert grid[0] == 0 and grid[-1] == 500000 and grid.size == 1001


# --- χ² fit and power of the samplers -----------------------------------------------------

DATA = np.repeat(np.arange(10.0), [1, 2, 3, 5, 3, 2, 2, 1, 1, 4])
GRID = np.arange(10.0)
SCALE = 2.0  # the declared Gumbel scale (ε = 2Δ/s = 0.5 for the median)


def _chi_square_p(draws, pmf):
    observed = np.array([np.count_nonzero(draws == c) for c in GRID])
    expected = pmf * len(draws)
    keep = expected > 0
    statistic = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    return stats.chi2.sf(statistic, keep.sum() - 1)


def secure_quantile(grid, q, scale, d_in):
    """The release's sampler, with the ρ the exponential mechanism accounts at this scale."""
    return SECURE.quantile(grid, q, scale, d_in, zcdp_rho(scale, d_in * max(q, 1 - q)))


def _secure_draws(n, scale=SCALE):
    draw = secure_quantile(GRID, HALF, scale, 1)
    return np.array([draw(DATA) for _ in range(n)])


def _preview_draws(n, scale=SCALE):
    draw = PreviewNoise(np.random.default_rng(7)).quantile(GRID, HALF, scale, 1, Fraction(0))
    return np.array([draw(DATA) for _ in range(n)])


@pytest.mark.parametrize("sampler", [_secure_draws, _preview_draws], ids=["secure", "preview"])
def test_sampler_fits_and_has_power(sampler):
    draws = sampler(8000)
    assert _chi_square_p(draws, quantile_pmf(DATA, GRID, HALF, SCALE)) > THRESHOLD
    for factor in (0.7, 1.3):  # ε × factor, i.e. scale / factor
        wrong = quantile_pmf(DATA, GRID, HALF, SCALE / factor)
        assert _chi_square_p(draws, wrong) < THRESHOLD, f"no power against ε × {factor}"


def test_secure_sampler_checks_opendp_map_and_draws_fresh():
    first, second = _secure_draws(50), _secure_draws(50)
    assert not np.array_equal(first, second)
    assert set(first) <= set(GRID)


# --- error --------------------------------------------------------------------------------


def test_exact_moe_matches_simulation_and_the_data_free_bound():
    rng = np.random.default_rng(3)
    values = rng.integers(20, 70, size=400).astype(float)
    spec = _spec(0.5, (0, 100))
    mech = calibrate_quantile(spec, Share("pure", epsilon=0.2), StatContext())
    grid, scale = mech.grid(), mech.scales[0]
    pmf = quantile_pmf(values, grid, HALF, scale)
    rank, value = rank_errors(values, grid, HALF), value_errors(values, grid, HALF)
    moe_rank, moe_value = exact_moe(pmf, rank, 0.05), exact_moe(pmf, value, 0.05)
    assert pmf[rank <= moe_rank].sum() >= 0.95 > pmf[rank < moe_rank].sum()
    draws = draw_quantiles(StatData.ungrouped(values), mech, PreviewNoise(rng))
    sim = [
        draw_quantiles(StatData.ungrouped(values), mech, PreviewNoise(rng))[0, 0]
        for _ in range(2000)
    ]
    truth = np.quantile(values, 0.5, method="inverted_cdf")
    coverage = pmf[value <= moe_value].sum()  # ≥ 0.95: the errors are whole numbers
    assert coverage >= 0.95 > pmf[value < moe_value].sum()
    assert np.mean(np.abs(np.array(sim) - truth) <= moe_value) == pytest.approx(coverage, abs=0.02)
    assert draws.shape == (1, 1)
    # data free: P(rank error > best + s·ln(K/α)) ≤ α
    bound = rank.min() + mech.rank_moe_bound(0.05)[0]
    assert pmf[rank > bound].sum() <= 0.05
    assert moe_rank <= bound


@given(st.lists(st.integers(0, 20), min_size=0, max_size=60), st.floats(0.05, 5))
@settings(max_examples=50, deadline=None)
def test_data_free_rank_bound_holds(values, epsilon):
    spec = _spec(0.5, (0, 20))
    mech = calibrate_quantile(spec, Share("pure", epsilon=epsilon), StatContext())
    grid = mech.grid()
    data = np.array(values, dtype=float)
    pmf = quantile_pmf(data, grid, HALF, mech.scales[0])
    rank = rank_errors(data, grid, HALF)
    for alpha in (0.01, 0.1):
        assert pmf[rank > rank.min() + mech.rank_moe_bound(alpha)[0]].sum() <= alpha + 1e-12


def test_several_quantiles_split_the_budget_and_never_cross():
    spec = _spec([0.25, 0.5, 0.75], (0, 100))
    mech = calibrate_quantile(spec, Share("pure", epsilon=0.3), StatContext())
    assert sum(mech.epsilons) <= Fraction(0.3)
    rng = np.random.default_rng(5)
    cells = rng.integers(0, 3, 900)
    data = StatData(cells, rng.normal(50, 15, 900).clip(0, 100), 3)
    released = draw_quantiles(data, mech, PreviewNoise(rng))
    assert released.shape == (3, 3)
    assert np.all(np.diff(released, axis=1) >= 0)


# --- privacy audit on neighbouring data sets ---------------------------------------------


def test_privacy_audit_on_neighbouring_data_sets():
    """x and x′ differ by one row; the secure sampler's outputs against the declared EM.

    The claim is the declared mechanism's exact privacy loss on this pair (≤ ε, checked); the
    same audit must catch the sampler with its scale × 0.8.
    """
    x = np.array([0.0, 0.0, 1.0, 1.0, 3.0, 4.0])
    x_prime = np.append(x, 4.0)
    scale = 0.5  # ε = 2Δ/s = 2 for the median
    p = dict(zip(GRID5, quantile_pmf(x, GRID5, HALF, scale), strict=True))
    p_prime = dict(zip(GRID5, quantile_pmf(x_prime, GRID5, HALF, scale), strict=True))
    pair_epsilon = max(abs(math.log(p[c] / p_prime[c])) for c in GRID5)
    assert pair_epsilon <= 2.0
    claim = Claim(np.array([pair_epsilon]), np.array([0.0]), "declared EM on this pair")

    def outputs(data, s, n=8000):
        draw = secure_quantile(GRID5, HALF, s, 1)
        return [draw(data) for _ in range(n)]

    honest = audit_outputs(outputs(x, scale), outputs(x_prime, scale), p, p_prime, claim)
    assert not honest.violated, honest
    weak = audit_outputs(outputs(x, scale * 0.8), outputs(x_prime, scale * 0.8), p, p_prime, claim)
    assert weak.violated, weak
