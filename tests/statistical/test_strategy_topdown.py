"""Top-down post-processing: sums kept, non-negative, whole, unbiased."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.strategy.topdown import project_to_sums, round_keeping_sums, top_down


def brute_projection(v: np.ndarray, total: float) -> np.ndarray:
    """Bisection on τ for Σ max(v − τ, 0) = total (independent of the sort-based formula)."""
    low, high = v.min() - total - 1, v.max()
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if np.maximum(v - mid, 0).sum() > total else (low, mid)
    return np.maximum(v - (low + high) / 2, 0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=30),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
)
def test_projection_and_rounding_keep_sums(values, groups_count, seed) -> None:
    rng = np.random.default_rng(seed)
    v = np.array(values)
    groups = rng.integers(0, groups_count, v.size)
    groups[:groups_count] = np.arange(min(groups_count, v.size))
    count = int(groups.max()) + 1
    sums = rng.integers(0, 40, count).astype(float)
    projected = project_to_sums(v, groups, sums)
    assert np.all(projected >= 0)
    np.testing.assert_allclose(np.bincount(groups, projected, count), sums, atol=1e-9)
    for g in range(count):
        np.testing.assert_allclose(
            projected[groups == g], brute_projection(v[groups == g], sums[g]), atol=1e-6
        )
    rounded = round_keeping_sums(projected, groups, rng)
    assert np.all(rounded >= 0) and np.all(rounded == np.round(rounded))
    np.testing.assert_array_equal(np.bincount(groups, rounded, count), sums)
    assert np.all(np.abs(rounded - projected) < 1 + 1e-9)


def test_rounding_is_unbiased_per_cell() -> None:
    """Fit: the mean of 20,000 roundings is within 4 SE of x. Power: x + 0.05 is rejected."""
    rng = np.random.default_rng(7)
    x = np.array([0.3, 1.45, 2.25, 0.0, 3.0, 0.7, 0.3])  # sums to 8
    groups = np.zeros(x.size, dtype=np.int64)
    draws = np.array([round_keeping_sums(x, groups, rng) for _ in range(20000)])
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws)) + 1e-12
    assert np.all(np.abs(mean - x) <= 4 * se + 1e-12)
    fractional = (x % 1) > 0
    assert np.all(np.abs(mean - (x + 0.05))[fractional] > 4 * se[fractional])


def test_top_down_total_is_unbiased_and_tables_agree() -> None:
    """Three levels (total → 3 states → 7 counties) from noisy consistent estimates whose small
    cells go negative: the published total stays unbiased (within 3 SE over 400 draws)."""
    rng = np.random.default_rng(11)
    truth = np.array([0, 1, 2, 40, 0, 3, 80], dtype=float)
    state_of = np.array([0, 0, 1, 1, 2, 2, 2])
    published_totals = []
    for _ in range(400):
        county = truth + rng.normal(0, 3, truth.size)  # numpy noise: a test, not a release
        state = np.bincount(state_of, county, 3)
        total = np.array([state.sum()])
        fixed = top_down(
            [total, state, county], [None, (0, np.zeros(3, dtype=np.int64)), (1, state_of)], rng
        )
        assert np.all(fixed[2] >= 0) and np.all(fixed[2] == np.round(fixed[2]))
        np.testing.assert_array_equal(np.bincount(state_of, fixed[2], 3), fixed[1])
        assert fixed[1].sum() == fixed[0][0]
        published_totals.append(fixed[0][0])
    totals = np.array(published_totals)
    se = totals.std(ddof=1) / np.sqrt(totals.size)
    assert abs(totals.mean() - truth.sum()) <= 3 * se
