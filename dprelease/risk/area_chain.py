"""CONFIDENTIAL: records that meet one area's exact tables, built table by table.

The true records meet the exact tables, so a solution always exists; the MILP may just not
find one within its time limit (areas of a few hundred people, many tables). When the
tables' column sets have a running intersection order (each table meets the columns before
it inside one earlier table: a junction tree, as census workloads of nested margins do), a
solution is built directly: the first table's cells become records, and each later table
hands its other columns out to the records that share its separator's values. Exact tables
agree on every separator (they count the same rows), so the groups match in size. Tables
inside another table are met with it. A cyclic workload (a×b, b×c, a×c) has no such order;
then only the MILP answers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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


def feasible_counts(
    sizes: Sequence[int],
    axes: Sequence[tuple[int, ...]],
    cell_of_type: Sequence[np.ndarray],
    tables: Sequence[np.ndarray],
) -> np.ndarray | None:
    """Counts per record type that meet every table exactly, or None (no running
    intersection order, or tables that disagree, e.g. noisy ones)."""
    order = chain_order(axes)
    if order is None or not tables:
        return None
    people = round(float(tables[0].sum()))
    records = np.zeros((people, len(sizes)), np.int64)
    assigned: set[int] = set()
    for t in order:
        table_sizes = [sizes[a] for a in axes[t]]
        cells = np.repeat(np.arange(len(tables[t])), np.rint(tables[t]).astype(np.int64))
        if len(cells) != people:
            return None
        if not table_sizes:  # the area's total only: no column to hand out
            continue
        values = np.stack(np.unravel_index(cells, table_sizes), axis=1).astype(np.int64)
        shared = [k for k, a in enumerate(axes[t]) if a in assigned]
        shared_sizes = [table_sizes[k] for k in shared]
        table_key = _key(values[:, shared], shared_sizes)
        record_key = _key(records[:, [axes[t][k] for k in shared]], shared_sizes)
        by_table = np.argsort(table_key, kind="stable")
        by_record = np.argsort(record_key, kind="stable")
        if not np.array_equal(table_key[by_table], record_key[by_record]):
            return None
        records[np.ix_(by_record, np.array(axes[t], np.int64))] = values[by_table]
        assigned |= set(axes[t])
    types = _key(records, sizes) if sizes else np.zeros(people, np.int64)
    counts = np.bincount(types, minlength=int(np.prod(sizes)) if sizes else 1).astype(float)
    for cells, values in zip(cell_of_type, tables, strict=True):
        if not np.array_equal(np.bincount(cells, weights=counts, minlength=len(values)), values):
            return None
    return counts
