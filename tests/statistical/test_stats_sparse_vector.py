"""The sparse vector technique (dprelease/stats/sparse_vector.py): cost per accountant, the
algorithm's halting, and χ² fit and power of its output distribution (AboveThreshold, c = 1:
the index of the first positive, computed exactly) for the secure and the preview noise.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import PlanError
from dprelease.release.stat_noise import SECURE
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.sparse_vector import (
    calibrate_sparse_vector,
    largest_cells,
    noise_source,
    preview_source,
    sparse_vector,
)

THRESHOLD = 1e-6


@pytest.mark.parametrize("accounting", ["pure", "approx", "advanced", "zcdp"])
@pytest.mark.parametrize("c", [1, 3])
def test_cost_never_exceeds_the_share_and_scales_follow_the_seed(accounting, c):
    share = Share(accounting, rho=0.5) if accounting == "zcdp" else Share(accounting, 1.0, 1e-6)
    svt = calibrate_sparse_vector(100, c, share, StatContext(2, "add_remove"))
    assert svt.epsilon <= 1  # ε = 1, or √(2ρ) = 1 under zcdp
    # σ = 2cΔ/ε on the threshold, 2σ on each query (Δ = max_rows = 2)
    assert svt.threshold_noise.scale == pytest.approx(2 * c * 2 / 1.0)
    assert svt.query_noise.scale == pytest.approx(4 * c * 2 / 1.0)
    if accounting == "zcdp":
        assert svt.cost.rho <= 0.5 and svt.epsilon**2 / 2 <= Fraction(0.5)
    else:
        assert svt.cost.epsilon <= 1.0


def test_bad_parameters_are_refused():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(PlanError):
            calibrate_sparse_vector(10, bad, Share("pure", epsilon=1.0), StatContext())
    with pytest.raises(PlanError):
        calibrate_sparse_vector(10.5, 1, Share("pure", epsilon=1.0), StatContext())


def test_answers_far_from_the_threshold_and_halting():
    svt = calibrate_sparse_vector(1000, 2, Share("pure", epsilon=10.0), StatContext())
    answers = [0, 5000, 3, 9000, 7000, 0]
    result = sparse_vector(answers, svt, noise_source(SECURE, svt.sensitivity))
    # ⊥, ⊤, ⊥, ⊤, then halted after c = 2 positives: the rest is never looked at
    assert result.above == (False, True, False, True, None, None)
    assert result.positives == (1, 3) and result.halted_at == 3
    assert sparse_vector([0, 0], svt, noise_source(SECURE, 1)).above == (False, False)


def test_largest_cells_are_the_queries_of_the_table_question():
    tables = [np.array([3, 9, 1]), np.array([[0, 2], [50, 4]]), np.array([], dtype=int)]
    assert largest_cells(tables) == [9, 50, 0]


# --- χ² fit and power of AboveThreshold's output ----------------------------------------


def _tail(k, scale):
    """P(X ≥ k) for the discrete Laplace with scale b, vectorised over integer k."""
    t = np.exp(-1 / scale)
    k = np.asarray(k, dtype=float)
    return np.where(k >= 1, t**k / (1 + t), 1 - t ** (1 - k) / (1 + t))


def _first_positive_pmf(answers, threshold, noise_t: Noise, noise_q: Noise):
    """P(first ⊤ at query k), k = 0..K−1, and P(no ⊤): sum over the noisy threshold."""
    span = int(60 * noise_t.scale) + 1
    values = np.arange(threshold - span, threshold + span + 1)
    t = np.exp(-1 / noise_t.scale)
    weights = (1 - t) / (1 + t) * t ** np.abs(values - threshold)
    below_so_far = np.ones_like(weights)
    pmf = []
    for answer in answers:
        above = _tail(values - answer, noise_q.scale)  # P(answer + ν ≥ T̂)
        pmf.append((weights * below_so_far * above).sum())
        below_so_far = below_so_far * (1 - above)
    pmf.append((weights * below_so_far).sum())
    return np.array(pmf)


ANSWERS = [10, 14, 18, 22, 12]
T = 20


def _outputs(source, svt, n):
    firsts = []
    for _ in range(n):
        positives = sparse_vector(ANSWERS, svt, source).positives
        firsts.append(positives[0] if positives else len(ANSWERS))
    return np.bincount(firsts, minlength=len(ANSWERS) + 1)


@pytest.mark.parametrize("sampler", ["secure", "preview"])
def test_output_fits_and_has_power(sampler):
    svt = calibrate_sparse_vector(T, 1, Share("pure", epsilon=1.0), StatContext())
    n = 4000
    source = (
        noise_source(SECURE, svt.sensitivity)
        if sampler == "secure"
        else preview_source(np.random.default_rng(4))
    )
    observed = _outputs(source, svt, n)

    def p_value(factor):
        noise_t = Noise("discrete_laplace", svt.threshold_noise.scale / factor)
        noise_q = Noise("discrete_laplace", svt.query_noise.scale / factor)
        expected = _first_positive_pmf(ANSWERS, T, noise_t, noise_q) * n
        return stats.chi2.sf(((observed - expected) ** 2 / expected).sum(), expected.size - 1)

    assert _first_positive_pmf(ANSWERS, T, svt.threshold_noise, svt.query_noise).sum() == (
        pytest.approx(1.0, abs=1e-12)
    )
    assert p_value(1.0) > THRESHOLD
    for factor in (0.7, 1.3):
        assert p_value(factor) < THRESHOLD, f"no power against ε × {factor}"


@given(st.floats(0.001, 50), st.integers(1, 50), st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_exact_cost_fits_any_share(epsilon, c, rows):
    pure = calibrate_sparse_vector(5, c, Share("pure", epsilon=epsilon), StatContext(rows))
    assert pure.epsilon <= Fraction(epsilon)
    zcdp = calibrate_sparse_vector(5, c, Share("zcdp", rho=epsilon), StatContext(rows))
    assert zcdp.epsilon**2 / 2 <= Fraction(epsilon)
