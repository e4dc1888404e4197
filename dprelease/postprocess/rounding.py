"""Controlled rounding: whole numbers that keep every consistency constraint exactly.

Rounding each cell on its own breaks the sums (a state would no longer equal its counties).
Given consistent real estimates x (within their bounds), we look for integers z with the same
constraints C z = 0, the same bounds, each z_j ∈ {⌊x_j⌋, ⌈x_j⌉} where possible, minimising the
weighted distance Σ w_j |z_j − x_j| (w = 1/noise variance, as in consistency).

Two methods, chosen by size (`MILP_CELL_LIMIT`, measured in bench/bench_postprocess.py):

- ``milp``: the whole problem as one mixed-integer program for scipy's HiGHS. Optimal, and
  fast up to some tens of thousands of cells thanks to the network-like structure.
- ``sequential``: the sub-tables coarse to fine (total, then states, then counties, …), each
  rounded so that it sums exactly to the already-rounded sub-tables just below it. One sum to
  match (a tree level) is the largest-remainder method, vectorised; several (age×sex must
  match both age and sex) is a small integer program over that table alone. Each table is
  then rounded to match its own sub-table. Consistency follows by transitivity: two tables
  agree on the sub-table they share because both sum to the same rounded values.

If a table's integer program has no solution with each cell at ⌊x⌋ or ⌈x⌉ (possible for three
or more overlapping sums), it is solved again allowing each cell `WIDEN` further steps.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import numpy as np

from dprelease.plan.subtables import Key, Workload, cell_map
from dprelease.postprocess.consistency import Constraints

RoundingMethod = Literal["auto", "milp", "sequential"]
MILP_CELL_LIMIT = 5_000  # above this, the sequential method (see the benchmark)
MILP_TIME_LIMIT = 20.0  # seconds at most; on time-out without a solution, fall back to sequential
MILP_CELL_SECONDS = 300e-6  # the whole-problem MILP's time limit per cell (3,309 cells: 0.9 s)
# One table's MILP when it has three or more sub-tables to match, all its attempts together
# (two such MILPs on 4,320 cells took 20 s each, then failed; issue 35 bench plan 30): past
# it, `RoundingFailed`. `postprocess.cost` admits this much per such table (per cell, as the
# whole problem's, with a floor).
TABLE_MILP_SECONDS = 0.05
WIDEN = 2
LP_BATCH_CELLS = 2_000  # free cells per two-sum LP (bench/bench_postprocess.py, issue 25)
SNAP = 1e-7  # a value this close to a whole number counts as that number


class RoundingFailed(Exception):
    """Sequential rounding met a table (three or more overlapping sub-tables, many cells at
    their bound) whose rounded sub-tables no whole table within its bounds meets (issue 35
    bench plan 22): the pipeline keeps the consistent estimate and reports 'integer' skipped."""


def _floor(values: np.ndarray) -> np.ndarray:
    floor: np.ndarray = np.floor(values + SNAP)
    return floor


def _milp_round(
    values: np.ndarray,
    weights: np.ndarray,
    matrix: Any,
    rhs: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    widen: int = 0,
    time_limit: float = MILP_TIME_LIMIT,
) -> np.ndarray | None:
    """Integers z within bounds with matrix @ z = rhs, minimising Σ w |z − x|; None if none."""
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = values.size
    floor = _floor(values)
    low = np.maximum(np.ceil(lower - SNAP), floor - widen)
    high = np.minimum(np.floor(upper + SNAP), floor + 1 + widen)
    if np.any(low > high):
        return None
    if widen == 0:
        # on [⌊x⌋, ⌊x⌋+1], |z − x| is linear in z: slope 1 − 2·frac
        cost = weights * (1 - 2 * (values - floor))
        bounds = Bounds(low, high)
        constraints = [LinearConstraint(matrix, rhs, rhs)] if matrix.shape[0] else []
        integrality = np.ones(n)
    else:  # z and t ≥ |z − x|
        cost = np.concatenate([np.zeros(n), weights])
        eye = sparse.identity(n, format="csr")
        bounds = Bounds(np.concatenate([low, np.zeros(n)]), np.concatenate([high, high - low + 1]))
        constraints = [
            LinearConstraint(sparse.hstack([eye, -eye]), -np.inf, values),
            LinearConstraint(sparse.hstack([-eye, -eye]), -np.inf, -values),
        ]
        if matrix.shape[0]:
            zero = sparse.csr_matrix((matrix.shape[0], n))
            constraints.append(LinearConstraint(sparse.hstack([matrix, zero]), rhs, rhs))
        integrality = np.concatenate([np.ones(n), np.zeros(n)])
    result = milp(
        cost,
        integrality=integrality,
        bounds=bounds,
        constraints=constraints,
        options={"time_limit": time_limit, "presolve": True},
    )
    if result.x is None:
        return None
    rounded: np.ndarray = np.rint(result.x[:n])
    if matrix.shape[0] and not np.array_equal(matrix @ rounded, rhs):
        return None
    return rounded


def _largest_remainder(
    values: np.ndarray, group: np.ndarray, targets: np.ndarray, upper: np.ndarray
) -> np.ndarray | None:
    """Round so that each group sums to its target: floors, then +1 to the largest fractions.

    Vectorised over all groups; None when a group's target is out of reach this way.
    """
    floor = _floor(values)
    room = floor + 1 <= upper + SNAP
    deficit = targets - np.bincount(group, weights=floor, minlength=targets.size)
    if np.any(deficit < 0) or np.any(deficit > np.bincount(group[room], minlength=targets.size)):
        return None
    fraction = np.where(room, values - floor, -1.0)
    order = np.lexsort((-fraction, group))
    starts = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=targets.size))[:-1]])
    rank = np.empty(values.size, dtype=np.int64)
    rank[order] = np.arange(values.size) - starts[group[order]]
    rounded: np.ndarray = floor + (rank < deficit[group])
    return rounded


def _sum_matrix(group: np.ndarray, groups: int) -> Any:
    from scipy import sparse

    ones = np.ones(group.size)
    return sparse.csr_matrix((ones, (group, np.arange(group.size))), shape=(groups, group.size))


def _round_matching(
    values: np.ndarray,
    sums: list[tuple[np.ndarray, np.ndarray]],
    lower: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray:
    """Round one table so that each (cell → group, target) sum holds exactly."""
    values = np.clip(values, lower, upper)
    if not sums:
        nearest: np.ndarray = np.clip(
            np.rint(values), np.ceil(lower - SNAP), np.floor(upper + SNAP)
        )
        return nearest
    if len(sums) == 1:
        found = _largest_remainder(values, sums[0][0], sums[0][1], upper)
        if found is not None:
            return found
    if len(sums) == 2:
        found = _round_two_sums(values, sums, lower, upper)
        if found is not None:
            return found
    from scipy import sparse

    matrix = sparse.vstack([_sum_matrix(g, t.size) for g, t in sums]).tocsr()
    rhs = np.concatenate([t for _, t in sums])
    weights = np.ones(values.size)
    deadline = time.perf_counter() + max(TABLE_MILP_SECONDS, values.size * MILP_CELL_SECONDS)
    for widen in (0, WIDEN, 10 * WIDEN):
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        found = _milp_round(values, weights, matrix, rhs, lower, upper, widen, left)
        if found is not None:
            return found
    raise RoundingFailed("controlled rounding found no integer table matching its sub-tables")


def _round_two_sums(
    values: np.ndarray,
    sums: list[tuple[np.ndarray, np.ndarray]],
    lower: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray | None:
    """Two sums to match (county totals and state×age×sex×race): a linear program suffices.

    Every cell lies in one group of each sum, so the constraint matrix is the incidence
    matrix of a bipartite graph, which is totally unimodular: with integer bounds ⌊x⌋, ⌊x⌋+1
    and integer targets, every vertex of the LP is whole (two-way controlled rounding always
    exists, Bacharach 1966). The graph falls apart into independent blocks (one per state
    for county × age × sex × race), each a small LP for HiGHS's dual simplex, which returns
    a vertex. Blocks are solved together up to `LP_BATCH_CELLS` free cells per LP: one call
    per block spent most of its time setting HiGHS up (1,177 calls, 4 of a consistent
    release's 11 s on the sample), and one LP over 100,000 cells is slower than its parts.
    None if an LP fails, and the caller falls back to the MILP.
    """
    from scipy import sparse
    from scipy.optimize import linprog
    from scipy.sparse.csgraph import connected_components

    (first, first_targets), (second, second_targets) = sums
    nodes = first_targets.size + second_targets.size
    ones = np.ones(values.size)
    graph = sparse.csr_matrix((ones, (first, first_targets.size + second)), shape=(nodes, nodes))
    _, labels = connected_components(graph, directed=False)
    block_of_cell = labels[first]
    floor = _floor(values)
    low = np.maximum(np.ceil(lower - SNAP), floor)
    high = np.minimum(np.floor(upper + SNAP), floor + 1)
    if np.any(low > high):
        return None
    cost = 1 - 2 * (values - floor)  # |z − x| on [⌊x⌋, ⌊x⌋+1] is linear in z
    # Zero-restricted: a whole value (most cells: zeros after non-negativity) keeps its value;
    # a two-way rounding that does so exists (Bacharach), and it shrinks each LP many times.
    whole_value = np.abs(values - np.rint(values)) <= SNAP
    rounded = np.where(whole_value, np.clip(np.rint(values), low, high), np.nan)
    first_left = first_targets - np.bincount(
        first[whole_value], weights=rounded[whole_value], minlength=first_targets.size
    )
    second_left = second_targets - np.bincount(
        second[whole_value], weights=rounded[whole_value], minlength=second_targets.size
    )
    free = np.flatnonzero(~whole_value)
    order = free[np.argsort(block_of_cell[free], kind="stable")]
    bounds = np.flatnonzero(np.diff(block_of_cell[order])) + 1
    for cells in _batches(np.split(order, bounds) if order.size else [], LP_BATCH_CELLS):
        rows_a, group_a = np.unique(first[cells], return_inverse=True)
        rows_b, group_b = np.unique(second[cells], return_inverse=True)
        matrix = sparse.vstack(
            [_sum_matrix(group_a, rows_a.size), _sum_matrix(group_b, rows_b.size)]
        ).tocsr()
        rhs = np.concatenate([first_left[rows_a], second_left[rows_b]])
        result = linprog(
            cost[cells],
            A_eq=matrix,
            b_eq=rhs,
            bounds=np.column_stack([low[cells], high[cells]]),
            method="highs-ds",
        )
        if result.x is None:
            return None
        whole = np.rint(result.x)
        if not np.array_equal(matrix @ whole, rhs) or np.abs(whole - result.x).max() > 1e-6:
            return None
        rounded[cells] = whole
    # groups with no free cell must already hold their targets
    for group, targets in sums:
        if not np.array_equal(np.bincount(group, weights=rounded, minlength=targets.size), targets):
            return None
    return rounded


def _batches(blocks: list[np.ndarray], cells: int) -> list[np.ndarray]:
    """Consecutive blocks joined until each batch holds at least `cells` cells (the last may
    hold fewer): an optimal vertex of independent blocks together is one of each block."""
    batches: list[np.ndarray] = []
    pending: list[np.ndarray] = []
    size = 0
    for block in blocks:
        pending.append(block)
        size += block.size
        if size >= cells:
            batches.append(np.concatenate(pending))
            pending, size = [], 0
    if pending:
        batches.append(np.concatenate(pending))
    return batches


def _aggregate(group: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    total: np.ndarray = np.bincount(group, weights=values, minlength=size)
    return total


def sequential_round(
    workload: Workload,
    tables: list[np.ndarray],
    lower: list[np.ndarray],
    upper: list[np.ndarray],
) -> list[np.ndarray]:
    """The sub-tables coarse to fine, each matching the rounded ones just below it."""
    schema = workload.schema
    rounded_keys: dict[Key, np.ndarray] = {}
    rounded: list[np.ndarray | None] = [None] * len(tables)
    for key in workload.keys:
        rep = workload.representative[key]
        predecessors = workload.predecessors(key)
        if workload.key_of(rep) == key:  # round the released table itself
            values, lo, hi = tables[rep], lower[rep], upper[rep]
            maps = [workload.cell_map(rep, p) for p in predecessors]
        else:  # a sub-table no table releases as such: round its sums
            size = int(np.prod([schema[c].size for c in key]))
            group = workload.cell_map(rep, key)
            values = _aggregate(group, tables[rep], size)
            lo = _aggregate(group, lower[rep], size)
            hi = _aggregate(group, upper[rep], size)
            maps = [cell_map(schema, key, p) for p in predecessors]
        sums = [(m, rounded_keys[p]) for m, p in zip(maps, predecessors, strict=True)]
        result = _round_matching(values, sums, lo, hi)
        if workload.key_of(rep) == key:
            rounded[rep] = result
            size = int(np.prod([schema[c].size for c in key]))
            rounded_keys[key] = _aggregate(workload.cell_map(rep, key), result, size)
        else:
            rounded_keys[key] = result
    out = []
    for i, values in enumerate(tables):
        done = rounded[i]
        if done is None:
            key = workload.key_of(i)
            done = _round_matching(
                values, [(workload.cell_map(i, key), rounded_keys[key])], lower[i], upper[i]
            )
        out.append(done)
    return out


def controlled_round(
    workload: Workload,
    constraints: Constraints,
    estimate: np.ndarray,
    weights: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    method: RoundingMethod = "auto",
) -> tuple[np.ndarray, str]:
    """Integers (as int64) that keep C z = 0 and the bounds; also the method that ran."""
    estimate = np.clip(estimate, lower, upper)
    if method == "milp" or (method == "auto" and estimate.size <= MILP_CELL_LIMIT):
        rhs = np.zeros(constraints.matrix.shape[0])
        limit = min(MILP_TIME_LIMIT, max(0.2, estimate.size * MILP_CELL_SECONDS))
        found = _milp_round(estimate, weights, constraints.matrix, rhs, lower, upper, 0, limit)
        if found is not None:
            return found.astype(np.int64), "milp"
    parts = sequential_round(
        workload,
        constraints.split(estimate),
        constraints.split(lower),
        constraints.split(upper),
    )
    return np.concatenate(parts).astype(np.int64), "sequential"
