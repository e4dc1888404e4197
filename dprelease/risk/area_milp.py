"""CONFIDENTIAL: one small area rebuilt as an integer program (scipy's HiGHS). The unknowns are an
integer count per possible record type (the cross product of the workload's columns' domains);
exact tables are matched with equality, noisy ones by the least L1 gap Σ|A x − b|; records in a
cell published as 0 are ruled out first. For exact tables, one more solve with a no-good cut
tells whether the solution is unique; when the solver runs out of time before any solution,
the records are built table by table (`area_chain`), so exact tables never go unsolved.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from dprelease.plan.model import Plan
from dprelease.risk.area_chain import feasible_counts
from dprelease.risk.area_tables import (
    Workload,
)


@dataclass(frozen=True)
class RecordSpace:
    """Every possible record of the workload's columns, and the cell it falls in per table."""

    sizes: tuple[int, ...]
    cell_of_type: tuple[np.ndarray, ...] = field(repr=False)
    axes: tuple[tuple[int, ...], ...] = ()  # per table, the positions of its columns

    @classmethod
    def of(cls, plan: Plan, load: Workload) -> RecordSpace:
        sizes = load.sizes(plan)
        grids = np.indices(sizes).reshape(len(sizes), -1) if sizes else np.zeros((0, 1), int)
        cells, axes = [], []
        for table in load.tables:
            index = np.zeros(grids.shape[1], np.int64)
            positions = tuple(load.columns.index(column) for column in table)
            for axis in positions:
                index = index * sizes[axis] + grids[axis]
            cells.append(index)
            axes.append(positions)
        return cls(sizes, tuple(cells), tuple(axes))

    @property
    def types(self) -> int:
        return math.prod(self.sizes)


@dataclass(frozen=True)
class Solved:
    counts: np.ndarray | None  # per record type, or None without a solution
    optimal: bool
    unique: bool | None = None


def solve_area(
    space: RecordSpace,
    tables: list[np.ndarray],
    exact: bool,
    seconds: float,
    check_unique: bool,
    cost: np.ndarray,
) -> Solved:
    allowed = np.ones(space.types, bool)
    upper = np.full(space.types, np.inf)
    for cells, values in zip(space.cell_of_type, tables, strict=True):
        published = values[cells]
        allowed &= published > 0
        upper = np.minimum(upper, published)
    chosen = np.flatnonzero(allowed)
    if len(chosen) == 0:
        return Solved(np.zeros(space.types), True, True)
    blocks, offsets, rhs = [], 0, []
    for cells, values in zip(space.cell_of_type, tables, strict=True):
        rows = cells[chosen] + offsets
        blocks.append(rows)
        rhs.append(values)
        offsets += len(values)
    row = np.concatenate(blocks)
    col = np.tile(np.arange(len(chosen)), len(blocks))
    matrix = sp.csr_array((np.ones(len(row)), (row, col)), shape=(offsets, len(chosen)))
    b = np.concatenate(rhs)
    n_x = len(chosen)
    options = {"time_limit": max(seconds, 0.05), "disp": False}
    if exact:
        objective = cost[chosen]
        constraints = [LinearConstraint(matrix, b, b)]
        integrality = np.ones(n_x)
        bounds = Bounds(np.zeros(n_x), upper[chosen])
    else:  # min Σ s⁺ + s⁻ with A x − s⁺ + s⁻ = b
        eye = sp.identity(offsets, format="csr")
        matrix = sp.hstack([matrix, -eye, eye], format="csr")
        tie_break = 1e-3 * cost[chosen] / max(float(cost.max()), 1.0)
        objective = np.concatenate([tie_break, np.ones(2 * offsets)])
        constraints = [LinearConstraint(matrix, b, b)]
        integrality = np.concatenate([np.ones(n_x), np.zeros(2 * offsets)])
        bounds = Bounds(
            np.zeros(n_x + 2 * offsets),
            np.concatenate([upper[chosen], np.full(2 * offsets, np.inf)]),
        )
    started = time.perf_counter()
    result = milp(
        objective, constraints=constraints, integrality=integrality, bounds=bounds, options=options
    )
    if result.x is None:
        # out of time before any solution; exact tables are always met by the true records,
        # and when they form a junction tree a solution is built without the solver
        prior = np.exp(-cost)  # the attacker's prior mix, as the objective uses it
        built = feasible_counts(space.sizes, space.axes, space.cell_of_type, tables, prior)
        return Solved(built if exact else None, False)
    counts = np.zeros(space.types)
    counts[chosen] = np.rint(result.x[:n_x])
    optimal = result.status == 0
    if not (exact and optimal and check_unique):
        return Solved(counts, optimal)
    left = seconds - (time.perf_counter() - started)
    return Solved(counts, optimal, is_unique(matrix, b, counts[chosen], upper[chosen], left))


def is_unique(
    matrix: sp.csr_array, b: np.ndarray, found: np.ndarray, upper: np.ndarray, seconds: float
) -> bool | None:
    """Re-solve with a no-good cut: binaries y_t (t in the found support) with
    x_t + (u_t − x*_t + 1)·y_t ≤ u_t (y_t = 1 forces x_t ≤ x*_t − 1) and Σ y ≥ 1. Every
    solution has the same total, so any other solution lowers some x_t of the support.
    Infeasible: unique. None: the time ran out."""
    if seconds <= 0.05:
        return None
    support = np.flatnonzero(found > 0)
    n_x, n_y = len(found), len(support)
    big = upper[support] - found[support] + 1
    cut = sp.csr_array(
        (
            np.concatenate([np.ones(n_y), big]),
            (np.concatenate([np.arange(n_y)] * 2), np.concatenate([support, n_x + np.arange(n_y)])),
        ),
        shape=(n_y, n_x + n_y),
    )
    pad = sp.csr_array((matrix.shape[0], n_y))
    constraints = [
        LinearConstraint(sp.hstack([matrix, pad], format="csr"), b, b),
        LinearConstraint(cut, -np.inf, upper[support]),
        LinearConstraint(np.concatenate([np.zeros(n_x), np.ones(n_y)])[None, :], 1, np.inf),
    ]
    bounds = Bounds(np.zeros(n_x + n_y), np.concatenate([upper, np.ones(n_y)]))
    result = milp(
        np.zeros(n_x + n_y),
        constraints=constraints,
        integrality=np.ones(n_x + n_y),
        bounds=bounds,
        options={"time_limit": seconds, "disp": False},
    )
    if result.status == 2:
        return True
    if result.x is not None:
        return False
    return None
