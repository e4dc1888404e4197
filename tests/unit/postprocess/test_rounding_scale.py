"""Two-way controlled rounding by blocks of linear programs (the census-scale path)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from dprelease.postprocess.rounding import _milp_round, _round_two_sums, _sum_matrix


def two_way_problem(seed: int, blocks: int, rows: int, columns: int):  # type: ignore[no-untyped-def]
    """Blocks of rows × columns cells (counties × age-sex-race within a state), a whole table
    z, real values x with z ∈ {⌊x⌋, ⌈x⌉}, and the row and column sums of z as targets."""
    rng = np.random.default_rng(seed)
    block, row, column = np.meshgrid(
        np.arange(blocks), np.arange(rows), np.arange(columns), indexing="ij"
    )
    first = (block * rows + row).ravel()  # a county
    second = (block * columns + column).ravel()  # a state's age × sex × race cell
    whole = rng.integers(0, 20, first.size).astype(float)
    shift = rng.uniform(0.01, 0.99, first.size) * rng.choice([-1, 1], first.size)
    values = np.maximum(whole + shift, 0)
    sums = [
        (first, np.bincount(first, weights=whole, minlength=blocks * rows)),
        (second, np.bincount(second, weights=whole, minlength=blocks * columns)),
    ]
    return values, sums


@pytest.mark.parametrize("seed", range(5))
def test_two_way_rounding_matches_both_sums_with_cells_at_floor_or_ceiling(seed: int) -> None:
    values, sums = two_way_problem(seed, blocks=4, rows=7, columns=9)
    lower, upper = np.zeros(values.size), np.full(values.size, np.inf)
    rounded = _round_two_sums(values, sums, lower, upper)
    assert rounded is not None
    for group, targets in sums:
        np.testing.assert_array_equal(np.bincount(group, weights=rounded), targets)
    assert set(np.unique(rounded - np.floor(values))) <= {0.0, 1.0}  # ⌊x⌋ or ⌊x⌋ + 1
    whole = values == np.rint(values)
    np.testing.assert_array_equal(rounded[whole], values[whole])  # zero-restricted
    # as good as the exact mixed-integer program with the same whole cells kept
    matrix = sparse.vstack([_sum_matrix(g, t.size) for g, t in sums]).tocsr()
    rhs = np.concatenate([t for _, t in sums])
    kept = np.where(whole, values, upper)
    best = _milp_round(values, np.ones(values.size), matrix, rhs, np.where(whole, values, 0), kept)
    assert best is not None
    assert np.abs(rounded - values).sum() == pytest.approx(np.abs(best - values).sum())


def test_two_way_rounding_declines_targets_out_of_reach() -> None:
    values, (first, second) = two_way_problem(0, blocks=2, rows=3, columns=4)
    far = (first[0], first[1] + 50)  # no cell may move more than one step
    lower, upper = np.zeros(values.size), np.full(values.size, np.inf)
    assert _round_two_sums(values, [far, second], lower, upper) is None
