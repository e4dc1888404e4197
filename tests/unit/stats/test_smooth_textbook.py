"""Issue 38.3: the smooth sensitivity of a quantile is NRS's textbook bound.

S(D) = max_t e^{−βt}·B((t+1)·d) with B(w) the widest gap of w places holding the rank r
(`dprelease/stats/smooth_bound.py`). On random data (hypothesis) it is at most the old bound
(windows of 2w places, which is the same formula at 2d), B((k+1)·d) still bounds the local
sensitivity of every data set k units away, and S is β-smooth; and NRS's formula for the
median, written out as the paper states it, gives the same number.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.stats.smooth_bound import (
    order_statistic,
    padded,
    smooth_sensitivity,
    window_gap,
)

LO, HI = 0.0, 10.0
VALUES = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.9, 5.0, 7.5, 10.0]), max_size=12)
QUANTILES = st.sampled_from([Fraction(1, 2), Fraction(1, 4), Fraction(9, 10), Fraction(1, 10)])


def _f(values: list[float], q: Fraction) -> tuple[float, np.ndarray, int]:
    x = padded(np.array(values, dtype=float), LO, HI)
    value, r = order_statistic(x, q)
    return value, x, r


def _old(x: np.ndarray, r: int, beta: float, steps: int) -> float:
    """The bound before issue 38.3: windows of 2(t + 1)·d places."""
    return max(
        math.exp(-beta * t) * window_gap(x, r, 2 * (t + 1) * steps) for t in range(x.size + 1)
    )


def _nrs_median(values: list[float], beta: float) -> float:
    """NRS 2007, the median of x_1 ≤ … ≤ x_n padded with the range's ends: S*(x) =
    max_k e^{−kβ}·max_{t=0..k+1}(x_{m+t} − x_{m+t−k−1}) (one row per unit)."""
    x = padded(np.array(values, dtype=float), LO, HI)
    _, m = order_statistic(x, Fraction(1, 2))
    at = lambda i: float(x[min(max(i, 0), x.size - 1)])  # noqa: E731
    return max(
        math.exp(-k * beta) * max(at(m + t) - at(m + t - k - 1) for t in range(k + 2))
        for k in range(x.size + 1)
    )


def _moved(values: list[float], edits: list[tuple[bool, float, int]]) -> list[float]:
    """The data after rows added (True, value) or removed (False, index)."""
    out = list(values)
    for add, value, index in edits:
        if add:
            out.append(value)
        elif out:
            out.pop(index % len(out))
    return sorted(out)


def edits(rows: int) -> st.SearchStrategy[list[tuple[bool, float, int]]]:
    """Up to `rows` rows added or removed."""
    edit = st.tuples(st.booleans(), st.sampled_from([0.0, 2.0, 5.0, 10.0]), st.integers(0, 20))
    return st.lists(edit, max_size=rows)


@settings(max_examples=300, deadline=None)
@given(VALUES, QUANTILES, st.floats(0.001, 3.0), st.integers(1, 3))
def test_the_textbook_bound_is_at_most_the_old_one(values, q, beta, steps) -> None:
    _, x, r = _f(values, q)
    new = smooth_sensitivity(x, r, beta, steps)
    assert new <= _old(x, r, beta, steps)
    assert new == smooth_sensitivity(x, r, beta, steps)  # deterministic
    assert _old(x, r, beta, steps) == smooth_sensitivity(x, r, beta, 2 * steps)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.floats(0.001, 3.0))
def test_it_is_nrs_formula_for_the_median(values, beta) -> None:
    _, x, r = _f(values, Fraction(1, 2))
    assert smooth_sensitivity(x, r, beta, 1) == _nrs_median(values, beta)


@settings(max_examples=400, deadline=None)
@given(VALUES, QUANTILES, st.integers(1, 3), st.data())
def test_it_bounds_the_local_sensitivity_at_distance_k(values, q, steps, data) -> None:
    """A data set k units (k·d rows) away, and any unit-neighbour of it: the quantile moves by
    at most B((k + 1)·d) of the original data; S is β-smooth between unit neighbours."""
    k = data.draw(st.integers(0, 3))
    far = _moved(values, data.draw(edits(k * steps)))
    near = _moved(far, data.draw(edits(steps)))
    _, x, r = _f(values, q)
    (f_far, _, _), (f_near, _, _) = _f(far, q), _f(near, q)
    assert abs(f_far - f_near) <= window_gap(x, r, (k + 1) * steps) + 1e-12
    beta = 0.3
    moved = _moved(values, data.draw(edits(steps)))
    _, y, r2 = _f(moved, q)
    s, s2 = smooth_sensitivity(x, r, beta, steps), smooth_sensitivity(y, r2, beta, steps)
    assert s <= math.exp(beta) * s2 + 1e-12 and s2 <= math.exp(beta) * s + 1e-12
    assert abs(_f(values, q)[0] - _f(moved, q)[0]) <= min(s, s2) + 1e-12
