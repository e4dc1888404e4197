"""Issue 25: a consistency solve that cannot succeed stops after a bounded number of steps.

The active set can fix cells at bounds that leave no consistent solution (a clamp that cannot
hold); conjugate gradients then never converge. They ran 20 iterations per constraint (70,540
on the sample, 4–7 s, in every accuracy simulation: one release took 140 s in the suite).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import sparse

from dprelease.postprocess import consistency


def _contradictory(pairs: int) -> consistency.Constraints:
    """Cell 0 is free; each pair of rows asks x0 = x(2i+1) and x0 = x(2i+2), which are fixed at
    different values: no x0 satisfies both."""
    rows, cols, vals = [], [], []
    for i in range(2 * pairs):
        rows += [i, i]
        cols += [0, i + 1]
        vals += [1.0, -1.0]
    matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(2 * pairs, 2 * pairs + 1))
    return consistency.Constraints(matrix, (0, 2 * pairs + 1))


def test_a_solve_without_a_consistent_answer_stops_at_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The conjugate gradients are a plain numpy loop since issue 35 (finding 9): counted
    here by the products with Cᵀ it makes (one per iteration, one for the first residual)."""
    pairs = 200  # 400 constraints: the old limit was 8,000 iterations
    constraints = _contradictory(pairs)
    products = [0]
    matrix = constraints.matrix
    transposed = matrix.T.tocsr()

    class Counted:
        def __matmul__(self, other: Any) -> Any:
            products[0] += 1
            return transposed @ other

    class Matrix:
        shape = matrix.shape
        T = type("T", (), {"tocsr": staticmethod(lambda: Counted())})()

        def __matmul__(self, other: Any) -> Any:
            return matrix @ other

        def multiply(self, other: Any) -> Any:
            return matrix.multiply(matrix)

    measured = np.concatenate([[5.0], np.tile([1.0, 9.0], pairs)])
    variances = np.concatenate([[1.0], np.zeros(2 * pairs)])  # only x0 may move
    guess = np.zeros(matrix.shape[0])
    solution = consistency._solve_multipliers(Matrix(), variances, matrix @ measured, guess, 1e-9)
    # at most the cap (8,000 before); here it breaks down at once (no curvature left)
    assert 1 <= products[0] - 1 <= consistency.CG_MAX_ITERATIONS
    estimate = measured - variances * (matrix.T @ solution)
    assert not consistency.is_consistent(constraints, estimate)  # and it is seen to fail


def test_a_feasible_solve_is_unchanged_by_the_cap() -> None:
    """Cell 0 free, the others fixed at one value: x0 moves to it in a few iterations."""
    constraints = _contradictory(200)
    measured = np.concatenate([[5.0], np.full(400, 3.0)])
    variances = np.concatenate([[1.0], np.zeros(400)])
    estimate, _ = consistency.weighted_projection(constraints, measured, variances)
    assert consistency.is_consistent(constraints, estimate)
    assert estimate[0] == pytest.approx(3.0)
