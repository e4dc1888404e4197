"""Which published tables are fixed top-down before the joint projection, and at what values.

Non-negativity on a sparse table lifts its empty cells; if that table is then summed into a
coarser one (experience from experience × education × region), the lift becomes a bias of the
coarser table. The Census TopDown avoids it by fixing each level from the least-squares
estimate before imposing bounds on the finer levels. Here, coarse to fine, a table is fixed
when the tables already fixed that it determines form a chain — one of them, its *parent*,
determines all the others (total → state → county; total → sex) — and it agrees with every
fixed table on the sub-table they share through that parent. It is then fixed within its
parent's cells: the Euclidean projection onto {x ≥ 0} keeping each parent cell's sum, and,
when `integer`, randomised rounding that keeps those sums and each cell's mean
(`strategy.topdown`). Tables with two or more parents (age × sex under age and sex) are left to
the joint weighted projection and controlled rounding, with every fixed cell pinned.

The grand total is fixed first: its least-squares value, made non-negative and randomly rounded
(E[round(t)] = t), so it stays unbiased.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprelease.plan.schema import Schema
from dprelease.plan.subtables import cell_map, closure, determines, shared_key
from dprelease.strategy.topdown import project_to_sums, round_keeping_sums


def grand_total(
    estimates: Sequence[np.ndarray], nonnegative: bool, integer: bool, rng: np.random.Generator
) -> float:
    """The least-squares grand total, made non-negative and rounded at random (mean kept).

    `estimates[0]` is a table that sums to the grand total (one without a partial column)."""
    total = float(estimates[0].sum())
    if nonnegative:
        total = max(total, 0.0)
    if integer:
        floor = np.floor(total)
        total = float(floor + (rng.random() < total - floor))
    return total


def _parent(schema: Schema, by: tuple[str, ...], fixed: dict[int, tuple[str, ...]]) -> int | None:
    """The fixed table that determines every fixed table `by` determines, if there is one,
    and through which `by` agrees with every fixed table on what they share."""
    below = [i for i, other in fixed.items() if determines(schema, by, other)]
    finest = [i for i in below if all(determines(schema, fixed[i], fixed[j]) for j in below)]
    if not finest:
        return None
    parent = min(finest, key=lambda i: len(closure(schema, fixed[i])))
    for other in fixed.values():
        shared = shared_key(schema, by, other)
        if shared is not None and not determines(schema, fixed[parent], shared):
            return None
    return parent


def fix_top_down(
    schema: Schema,
    bys: Sequence[tuple[str, ...]],
    estimates: Sequence[np.ndarray],
    *,
    total: float,
    integer: bool,
    rng: np.random.Generator,
) -> dict[int, np.ndarray]:
    """Table index → its fixed cells, for every table that can be fixed top-down.

    `estimates` are consistent least-squares estimates; a table with `by == ()` takes `total`.
    The others are visited coarse to fine; the rest are left out of the result.
    """
    order = sorted(
        range(len(bys)),
        key=lambda i: (len(closure(schema, bys[i])), estimates[i].size, i),
    )
    fixed: dict[int, np.ndarray] = {}
    fixed_by: dict[int, tuple[str, ...]] = {}
    for index in order:
        by = bys[index]
        if by == ():
            fixed[index], fixed_by[index] = np.array([total]), ()
            continue
        parent = _parent(schema, by, fixed_by)
        if parent is None:
            continue
        # each cell's parent cell, numbered as the parent table's own cells (its `by` order)
        groups = cell_map(schema, by, fixed_by[parent])
        values = project_to_sums(estimates[index], groups, fixed[parent])
        if integer:
            values = round_keeping_sums(values, groups, rng)
        fixed[index], fixed_by[index] = values, by
    return fixed
