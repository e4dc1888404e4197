"""CONFIDENTIAL: records that meet one area's exact tables, built table by table.

The true records meet the exact tables, so a solution always exists; the MILP may just not
find one within its time limit (areas of a few hundred people, many tables). When the
tables' column sets have a running intersection order (each table meets the columns before
it inside one earlier table: a junction tree, as census workloads of nested margins do), a
solution is built directly: the first table's cells are the first partial records, and each
later table hands its other columns out to the partial records that share its separator's
values. Exact tables agree on every separator (they count the same rows), so the two sides
of each hand-out have the same size. Tables inside another table are met with it. A cyclic
workload (a×b, b×c, a×c) has no such order; then only the MILP answers.

Each hand-out is the attacker's most likely one under the prior mix: a transportation
problem (partial records × the table's cells, cost −log prior of the combination), whose
linear program has whole-number vertices, so HiGHS's simplex answer is a valid hand-out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def chain_order(axes: Sequence[tuple[int, ...]]) -> list[int] | None:
    """The tables not inside another, in a running intersection order; None without one."""
    sets = [frozenset(a) for a in axes]
    maximal = [
        i
        for i, s in enumerate(sets)
        if not any(s < t or (s == t and j < i) for j, t in enumerate(sets))
    ]
    for start in sorted(maximal, key=lambda i: -len(sets[i])):
        order, seen = [start], set(sets[start])
        left = [i for i in maximal if i != start]
        while left:
            fits = [i for i in left if any(sets[i] & seen <= sets[j] for j in order)]
            if not fits:
                break
            order.append(fits[0])
            seen |= sets[fits[0]]
            left.remove(fits[0])
        if not left:
            return order
    return None


def _key(values: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """One integer per row for the combination of its columns (mixed radix)."""
    key = np.zeros(len(values), np.int64)
    for column, size in enumerate(sizes):
        key = key * size + values[:, column]
    return key


def _hand_out(supply: np.ndarray, demand: np.ndarray, cost: np.ndarray) -> np.ndarray | None:
    """Whole numbers y ≥ 0 (supply × demand) with the given row and column sums and the
    least Σ cost·y (a transportation problem: its LP vertices are whole numbers)."""
    rows, cols = cost.shape
    if rows == 1 or cols == 1:
        return np.outer(supply, demand) / max(float(supply.sum()), 1.0)
    cell = np.arange(rows * cols)  # y[i, j] is variable i·cols + j
    eq = sp.csr_array(
        (
            np.ones(2 * rows * cols),
            (np.concatenate([cell // cols, rows + cell % cols]), np.tile(cell, 2)),
        ),
        shape=(rows + cols, rows * cols),
    )
    result = linprog(
        cost.ravel(),
        A_eq=eq,
        b_eq=np.concatenate([supply, demand]),
        bounds=(0, None),
        method="highs",
    )
    if result.x is None:
        return None
    y = np.rint(result.x).reshape(rows, cols)
    ok = np.array_equal(y.sum(1), supply) and np.array_equal(y.sum(0), demand)
    return y if ok else None


def feasible_counts(
    sizes: Sequence[int],
    axes: Sequence[tuple[int, ...]],
    cell_of_type: Sequence[np.ndarray],
    tables: Sequence[np.ndarray],
    prior: np.ndarray | None = None,
) -> np.ndarray | None:
    """Counts per record type that meet every table exactly, or None (no running
    intersection order, or tables that disagree, e.g. noisy ones). `prior` (the share of
    each record type, as the attacker believes it) picks the most likely hand-outs."""
    order = chain_order(axes)
    if order is None or not tables:
        return None
    grid = (np.ones(int(np.prod(sizes))) if prior is None else prior).reshape(tuple(sizes))
    first = order[0]
    kinds, counts = _cells(sizes, axes[first], tables[first])
    assigned = set(axes[first])
    for t in order[1:]:
        cells, demand = _cells(sizes, axes[t], tables[t])
        shared = sorted(set(axes[t]) & assigned)
        joined = tuple(sorted(assigned | set(axes[t])))
        marginal = grid.sum(axis=tuple(a for a in range(len(sizes)) if a not in joined))
        log_prior = np.log(np.maximum(marginal, 1e-300))
        shared_sizes = [sizes[a] for a in shared]
        kind_key = _key(kinds[:, shared], shared_sizes)
        cell_key = _key(cells[:, shared], shared_sizes)
        new_kinds, new_counts = [], []
        for value in np.union1d(kind_key, cell_key):
            mine, theirs = kind_key == value, cell_key == value
            if counts[mine].sum() != demand[theirs].sum():
                return None  # the tables disagree on the separator
            both = np.maximum(kinds[mine][:, None, :], cells[theirs][None, :, :])
            cost = -log_prior[tuple(both[..., a] for a in joined)]
            y = _hand_out(counts[mine], demand[theirs], cost)
            if y is None:
                return None
            pick = y > 0
            new_kinds.append(both[pick])
            new_counts.append(y[pick])
        kinds, counts = np.concatenate(new_kinds), np.concatenate(new_counts)
        assigned |= set(axes[t])
    types = _key(kinds, sizes) if sizes else np.zeros(len(kinds), np.int64)
    total = np.bincount(types, weights=counts, minlength=int(np.prod(sizes)) if sizes else 1)
    for cells_of, values in zip(cell_of_type, tables, strict=True):
        if not np.array_equal(np.bincount(cells_of, weights=total, minlength=len(values)), values):
            return None
    return total


def _cells(
    sizes: Sequence[int], axes: tuple[int, ...], values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A table's non-empty cells as partial records (−1: a column not yet known; the codes
    are ≥ 0, so `np.maximum` merges two partial records) and their counts."""
    counts = np.rint(values).astype(np.int64)
    where = np.flatnonzero(counts)
    kinds = np.full((len(where), len(sizes)), -1, np.int64)
    if axes:
        codes = np.unravel_index(where, [sizes[a] for a in axes])
        for a, code in zip(axes, codes, strict=True):
            kinds[:, a] = code
    return kinds, counts[where].astype(np.float64)
