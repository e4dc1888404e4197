"""Whole-number clique tables of the model, from the released (post-processed) tables only.

The published tables, post-processed together, are non-negative whole numbers that agree on
every sub-table they share. The junction tree's cliques are visited in placement order; each
gets an integer table that sums, over its separator, to exactly what its parent's table sums
to there, so that records can be joined clique by clique without loss (`records`):

- a clique that *is* a published table (every clique, when the tables form no cycle) takes
  that table as released: consistency makes its separator sums agree, so nothing moves;
- a larger clique (a cycle's triangulation) is fitted by iterative proportional fitting to
  every published table inside it, starting from uniform (the maximum-entropy table with those
  marginals, Private-PGM's estimate when the marginals are consistent), scaled to its
  separator's sums, and rounded at random within each separator cell (systematic rounding:
  sums kept exactly, each cell's mean kept). Its tables may then miss by a little, and
  `microdata` reports by how much.

Fixed cells (structural zeros, invariants) enter as published tables: a zero stays zero under
IPF and rounding, and a table held exact is taken as released.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dprelease.errors import InternalError
from dprelease.limits import SYNTHETIC_IPF_ROUNDS
from dprelease.plan.model import Plan
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import Key, cell_map
from dprelease.synthetic.junction import JunctionTree, published_as_is, published_inside

IPF_TOL = 1e-7  # largest miss of a marginal, relative to the total


def marginal(schema: Schema, key: Key, table: np.ndarray, target: Key) -> np.ndarray:
    """Sum a table over `key` onto its sub-table `target`."""
    mapping = cell_map(schema, key, target)
    cells = int(np.prod([schema[n].size for n in target], dtype=np.int64))
    return np.bincount(mapping, weights=table.astype(np.float64), minlength=cells)


def ipf(
    total: float,
    cells: int,
    targets: Sequence[tuple[np.ndarray, np.ndarray]],
    rounds: int = SYNTHETIC_IPF_ROUNDS,
) -> np.ndarray:
    """Iterative proportional fitting from uniform to `targets` (cell map, marginal values),
    at most `rounds` rounds; the last target is met exactly (it is applied last)."""
    values = np.full(cells, total / max(cells, 1))
    for _ in range(rounds):
        worst = 0.0
        for mapping, wanted in targets:
            current = np.bincount(mapping, weights=values, minlength=wanted.size)
            worst = max(worst, float(np.max(np.abs(current - wanted), initial=0.0)))
            ratio = np.divide(wanted, current, out=np.zeros_like(wanted), where=current > 0)
            values *= ratio[mapping]
        if worst <= IPF_TOL * max(total, 1.0):
            break
    return values


def to_sums(values: np.ndarray, groups: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Scale each group of cells to its sum; a group with nothing in it but a positive sum is
    spread evenly (the model has no better guess there)."""
    current = np.bincount(groups, weights=values, minlength=sums.size)
    sizes = np.bincount(groups, minlength=sums.size)
    empty = (current <= 0) & (sums > 0)
    filled = np.where(empty[groups], 1.0, values)
    current = np.where(empty, sizes, current)
    ratio = np.divide(sums, current, out=np.zeros_like(sums, dtype=np.float64), where=current > 0)
    result: np.ndarray = filled * ratio[groups]
    return result


def round_keeping_sums(
    values: np.ndarray, groups: np.ndarray, sums: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Whole numbers summing to `sums` (integers) within each group, each cell's mean kept:
    systematic rounding, one uniform offset per group."""
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    running = np.cumsum(values[order])
    starts = np.searchsorted(sorted_groups, np.arange(sums.size))
    before = np.concatenate([[0.0], running])[starts]  # running sum before each group
    offset = rng.random(sums.size)
    within = running - before[sorted_groups] + offset[sorted_groups]
    upto = np.floor(within)
    previous = np.concatenate([[0.0], upto[:-1]])
    first = np.ones(order.size, dtype=bool)
    first[1:] = sorted_groups[1:] != sorted_groups[:-1]
    previous[first] = np.floor(offset[sorted_groups[first]])
    rounded = np.empty(values.size, dtype=np.int64)
    rounded[order] = np.maximum(upto - previous, 0).astype(np.int64)
    # float error can leave a group one off its sum: settle it on the group's largest cell
    miss = sums.astype(np.int64) - np.bincount(groups, weights=rounded, minlength=sums.size)
    for group in np.flatnonzero(miss):
        members = np.flatnonzero(groups == group)
        largest = members[np.argmax(values[members])]
        rounded[largest] = max(rounded[largest] + int(miss[group]), 0)
    return rounded


def _in_key_order(schema: Schema, by: tuple[str, ...], key: Key, values: np.ndarray) -> np.ndarray:
    """A table over `by` (which reduces to `key`) with its cells in `key`'s order."""
    ordered = np.zeros(values.size, dtype=np.float64)
    ordered[cell_map(schema, by, key)] = values
    return ordered


def fit_cliques(
    plan: Plan,
    tree: JunctionTree,
    released: Mapping[str, np.ndarray],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """One int64 table per node of `tree` (over its key, C order), each agreeing with its
    parent's on their separator. `released` holds every published table's counts."""
    schema = plan.schema
    total = float(next(iter(released.values())).sum()) if released else 0.0
    tables: list[np.ndarray] = []
    for node in tree.nodes:
        groups = cell_map(schema, node.key, node.separator)
        if node.parent is None:
            sums = np.array([float(round(total))])  # whole, even when "integer" was skipped
        else:
            parent = tree.nodes[node.parent]
            sums = marginal(schema, parent.key, tables[node.parent], node.separator)
        own = published_as_is(plan, node)
        if own is not None:
            values = _in_key_order(schema, own[0], node.key, released[own[1]])
        else:
            targets = [
                (cell_map(schema, node.key, by), np.asarray(released[name], np.float64))
                for by, name in published_inside(plan, node)
                if by
            ]
            separator = (groups, sums.astype(np.float64))
            values = ipf(total, node.cells, [*targets, separator], tree.rounds)
        if not np.array_equal(np.bincount(groups, weights=values, minlength=sums.size), sums):
            values = to_sums(values, groups, sums.astype(np.float64))
        if np.all(values == np.rint(values)):
            table = np.rint(values).astype(np.int64)
        else:
            table = round_keeping_sums(values, groups, np.rint(sums), rng)
        if not np.array_equal(np.bincount(groups, weights=table, minlength=sums.size), sums):
            raise InternalError("a clique's table does not meet its separator's sums")
        tables.append(table)
    return tables
