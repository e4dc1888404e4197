"""Shrinkage of a noisy table toward what its published sub-tables predict (`estimate: shrunk`).

Least squares gives each cell of a fine table its own noise: on a sparse 3-way table (commune ×
age × sex, 5 persons a cell, noise σ ≈ 13) most of a cell's estimate is noise. Its published
sub-tables (commune × sex, age × sex) are far more precise, and the table that has exactly
their sums and no further interaction (`sub_table_model`: iterative proportional fitting from
a flat start, exact in one pass when the sub-tables form a chain) predicts each cell. Empirical
Bayes weighs the two: each cell's departure from the prediction, d = y − m, has variance
τ² + v, with v the least-squares estimate's known noise variance per cell and τ² the true
departure, taken as θ·m (counts depart from a model about in proportion to its size, as
Poisson counts do) with θ estimated from the table's own d by the method of moments. The
estimate is m + s·d with s = θm / (θm + v), and its variance v·s weights it in the joint
non-negative projection that follows.

A table whose departures are large next to its noise (dense tables) keeps s ≈ 1: nothing
changes. A sparse table's cells move toward the prediction, so they are biased toward it (the
bias is measured and reported with the release's accuracy), while every sum the prediction was
built from is kept: the sub-tables, and so the grand total, stay unbiased.

Only noisy estimates and public structure enter; no true count is read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from dprelease.plan.schema import Schema
from dprelease.plan.subtables import cell_map, closure, determines

FIT_ROUNDS = 20  # proportional fitting; a chain of sub-tables is exact after one round
_FLOOR = 1e-9  # keeps the fitted ratios finite where an estimated sub-table sum is ≤ 0


def model_keys(
    schema: Schema, by: tuple[str, ...], others: Sequence[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    """The largest other published tables that `by` determines (strictly coarser ones)."""
    own = closure(schema, by)
    below = [o for o in dict.fromkeys(others) if o and closure(schema, o) < own]
    below = [o for o in below if determines(schema, by, o)]
    return [o for o in below if not any(closure(schema, o) < closure(schema, p) for p in below)]


def model_rank(schema: Schema, keys: Sequence[tuple[str, ...]]) -> int:
    """Dimension of the span of the sub-tables' sums (plain columns: Σ over the subsets S of
    some key of ∏_{c∈S} (size_c − 1), the grand total included)."""
    subsets: set[frozenset[str]] = {frozenset()}
    for key in keys:
        for r in range(1, len(key) + 1):
            subsets.update(frozenset(s) for s in combinations(key, r))
    return sum(math.prod(schema[c].size - 1 for c in s) for s in subsets)


def sub_table_model(
    schema: Schema, by: tuple[str, ...], values: np.ndarray, keys: Sequence[tuple[str, ...]]
) -> np.ndarray:
    """The non-negative table with the sums of `values` over each key and no other structure."""
    maps = [cell_map(schema, by, key) for key in keys]
    targets = [
        np.maximum(np.bincount(g, weights=values, minlength=int(g.max()) + 1), _FLOOR) for g in maps
    ]
    total = max(float(values.sum()), _FLOOR)
    model = np.full(values.size, total / values.size)
    for _ in range(FIT_ROUNDS):
        worst = 0.0
        for g, target in zip(maps, targets, strict=True):
            current = np.maximum(np.bincount(g, weights=model, minlength=target.size), _FLOOR)
            ratio = target / current
            model *= ratio[g]
            worst = max(worst, float(np.abs(ratio - 1).max()))
        if worst < 1e-9 or len(keys) < 2:
            break
    return model


# τ² / v (or θ·mean(m) / v) tried; never 0, which would make a cell's variance 0: the
# joint projection would hold it fixed as if known exactly
GRID = np.geomspace(1e-3, 1e3, 31)


def shrink(
    values: np.ndarray, variance: float, model: np.ndarray, rank: int
) -> tuple[np.ndarray, np.ndarray]:
    """Empirical-Bayes estimate toward `model`, and each cell's posterior variance.

    The spread of the true departures is either the same for every cell (τ²) or in
    proportion to the model (θ·m); both families and their level are chosen by the least
    Stein's unbiased risk estimate, SURE = Σ (1 − s)² d² + 2v (rank + (1 − rank/n) Σ s) − n v
    (the estimate as a linear smoother of y, with the model's leverage spread evenly), which
    is n·v for no shrinkage at all: a table is kept when no shrinkage is expected to help.
    """
    departure = values - model
    squares = departure * departure
    n = values.size
    leverage = min(rank / n, 1.0)
    size = np.maximum(model, 0.0)
    shapes = [np.ones(n), size / max(float(size.mean()), _FLOOR)]
    best, chosen = n * variance, np.ones(n)
    for shape in shapes:
        for level in GRID:
            spread = level * variance * shape
            weight = spread / (spread + variance)
            risk = (
                float(((1 - weight) ** 2) @ squares)
                + 2 * variance * (rank + (1 - leverage) * float(weight.sum()))
                - n * variance
            )
            if risk < best:
                best, chosen = risk, weight
    return model + chosen * departure, variance * chosen


def shrink_tables(
    schema: Schema,
    bys: Sequence[tuple[str, ...]],
    values: Sequence[np.ndarray],
    variances: Sequence[np.ndarray],
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each table of two or more columns shrunk toward its model, with per-cell variances for
    the joint projection that follows. The model is built from the other published tables it
    determines, or, without any, from its own one-way sums (the independence model: each sums
    many cells, so it is precise). Cells known exactly (variance 0) keep their values."""
    out_values = [np.asarray(v, dtype=np.float64) for v in values]
    out_variances = [np.asarray(v, dtype=np.float64) for v in variances]
    for index, by in enumerate(bys):
        y, cell_variance = out_values[index], out_variances[index]
        variance = float(cell_variance.max(initial=0.0))
        if len(by) < 2 or variance <= 0:
            continue
        keys = model_keys(schema, by, [b for b in bys if b != by]) or [(c,) for c in by]
        model = sub_table_model(schema, by, y, keys)
        estimate, posterior = shrink(y, variance, model, model_rank(schema, keys))
        held = cell_variance <= 0
        out_values[index] = np.where(held, y, estimate)
        out_variances[index] = np.where(held, 0.0, posterior)
    return out_values, out_variances
