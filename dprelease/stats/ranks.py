"""A quantile's utility on given values (CONFIDENTIAL inputs), shared by the exponential
mechanism (`quantile`) and the preview's Gumbel noisy max (`noise`).

u(c) = −|(1 − q)·#{x < c} − q·#{x > c}|, computed exactly as integers for q = N/D.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def integer_scores(values: np.ndarray, grid: np.ndarray, q: Fraction) -> np.ndarray:
    """|(D − N)·#{x < c} − N·#{x > c}| for q = N/D: the utility × D, as exact integers."""
    ordered = np.sort(values)
    below = np.searchsorted(ordered, grid, side="left").astype(np.int64)
    above = ordered.size - np.searchsorted(ordered, grid, side="right").astype(np.int64)
    num, den = q.numerator, q.denominator
    scores: np.ndarray = np.abs((den - num) * below - num * above)
    return scores


def rank_errors(values: np.ndarray, grid: np.ndarray, q: Fraction) -> np.ndarray:
    """−u(c): each candidate's distance in rank from the q-quantile (ties count as 0)."""
    errors: np.ndarray = integer_scores(values, grid, q) / q.denominator
    return errors
