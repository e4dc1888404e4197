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
    from scipy.sparse import linalg

    iterations: list[int] = []
    real = linalg.cg

    def counted(*args: Any, **kwargs: Any) -> Any:
        steps = [0]
        kwargs["callback"] = lambda _x: steps.__setitem__(0, steps[0] + 1)
        result = real(*args, **kwargs)
        iterations.append(steps[0])
        return result

    monkeypatch.setattr(linalg, "cg", counted)
    pairs = 200  # 400 constraints: the old limit was 8,000 iterations
    constraints = _contradictory(pairs)
    measured = np.concatenate([[5.0], np.tile([1.0, 9.0], pairs)])
    variances = np.concatenate([[1.0], np.zeros(2 * pairs)])  # only x0 may move
    estimate, _ = consistency.weighted_projection(constraints, measured, variances)
    assert iterations and max(iterations) == consistency.CG_MAX_ITERATIONS  # 8,000 before
    assert not consistency.is_consistent(constraints, estimate)  # and it is seen to fail


def test_a_feasible_solve_is_unchanged_by_the_cap() -> None:
    """Cell 0 free, the others fixed at one value: x0 moves to it in a few iterations."""
    constraints = _contradictory(200)
    measured = np.concatenate([[5.0], np.full(400, 3.0)])
    variances = np.concatenate([[1.0], np.zeros(400)])
    estimate, _ = consistency.weighted_projection(constraints, measured, variances)
    assert consistency.is_consistent(constraints, estimate)
    assert estimate[0] == pytest.approx(3.0)
