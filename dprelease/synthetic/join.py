"""Records of every declared column (issue 38.6): the published tables' records, joined to the
new columns and to each other along the extra pairs the share chose.

The published tables' records (`microdata.synthesize`) hold one block of columns per
component; blocks are independent of each other. A new column whose parent a table holds is
handed out within its parent's cells (its whole marginal sums to the parent's counts there);
any other new column starts as a block of its own, its rows its whole marginal in random
order. Then each chosen pair (a, b) joins b's block to the rows placed so far (a's side): its
noisy counts, clipped at zero, are raked to the records' margins of a and of b (iterative
proportional fitting on two margins), rounded to whole numbers keeping both margins exactly
(`round_two_way`), and every row with a = i takes one of the b values the table gives row i;
then b's block is re-paired to the rows by b. A block keeps its own rows and joint
distribution, so every published table still tabulates as before, exactly; the pair's joint
follows its measurement.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.subtables import ancestor_codes, ancestors
from dprelease.plan.synthesis import RAKE_ROUNDS, ExtraShape, Pair
from dprelease.synthetic.measure import ExtraMarginals
from dprelease.synthetic.records import CODE_TYPE

RAKE_TOL = 1e-9


def rake(start: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """`start` (r × c, ≥ 0) scaled by rows and columns towards these margins (IPF)."""
    values = start.astype(np.float64) + 1e-9  # every cell may take mass (no forced zeros)
    rows_f, cols_f = rows.astype(np.float64), cols.astype(np.float64)
    for _ in range(RAKE_ROUNDS):
        current = values.sum(axis=1)
        values *= np.divide(rows_f, current, out=np.zeros_like(rows_f), where=current > 0)[:, None]
        current = values.sum(axis=0)
        values *= np.divide(cols_f, current, out=np.zeros_like(cols_f), where=current > 0)[None, :]
        if np.abs(values.sum(axis=1) - rows_f).max(initial=0.0) <= RAKE_TOL * max(rows_f.sum(), 1):
            break
    return values


def round_two_way(values: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Whole numbers ≥ 0 with exactly these row and column sums, near `values`: floors, then
    the missing units to the largest remainders, then any still missing by the north-west
    corner rule (row and column needs always add up to the same number)."""
    table = np.floor(values).astype(np.int64)
    need_row = rows.astype(np.int64) - table.sum(axis=1)
    need_col = cols.astype(np.int64) - table.sum(axis=0)
    if (need_row < 0).any() or (need_col < 0).any():  # floors above a margin: start from 0
        table = np.zeros_like(table)
        need_row, need_col = rows.astype(np.int64).copy(), cols.astype(np.int64).copy()
    remainder = (values - np.floor(values)).ravel()
    for flat in np.argsort(-remainder, kind="stable"):
        if remainder[flat] <= 0:
            break
        i, j = divmod(int(flat), table.shape[1])
        if need_row[i] > 0 and need_col[j] > 0:
            table[i, j] += 1
            need_row[i] -= 1
            need_col[j] -= 1
    i = j = 0
    while i < need_row.size and j < need_col.size:
        step = min(need_row[i], need_col[j])
        table[i, j] += step
        need_row[i] -= step
        need_col[j] -= step
        if need_row[i] == 0:
            i += 1
        if j < need_col.size and need_col[j] == 0:
            j += 1
    if need_row.any() or need_col.any():
        raise InternalError("a two-way table's margins do not add up to the same total")
    whole: np.ndarray = table
    return whole


def hand_out(
    keys: np.ndarray, cells: np.ndarray, cell_keys: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """For rows with separator values `keys`, one of `cells` each (cells carry `cell_keys`,
    the same multiset as `keys`), at random within each separator value."""
    shuffled = rng.permutation(keys.size)
    row_order = shuffled[np.argsort(keys[shuffled], kind="stable")]
    cell_order = np.argsort(cell_keys, kind="stable")
    if not np.array_equal(keys[row_order], cell_keys[cell_order]):
        raise InternalError("the cells handed out do not match the rows' separator counts")
    assigned = np.empty(keys.size, dtype=np.int64)
    assigned[row_order] = cells[cell_order]
    return assigned


def _column_block(plan: Plan, column: str, codes: np.ndarray) -> dict[str, np.ndarray]:
    """A column's codes and its ancestors'."""
    block = {column: codes.astype(CODE_TYPE)}
    for above in ancestors(plan.schema, column):
        block[above] = ancestor_codes(plan.schema, column, above)[codes].astype(CODE_TYPE)
    return block


def join_all(
    plan: Plan,
    shape: ExtraShape,
    columns: dict[str, np.ndarray],
    extra: ExtraMarginals,
    margins: Mapping[str, np.ndarray],
    rows: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Every declared column's codes per row (see the module docstring). `columns` holds the
    published tables' records (none when the tables are a grand total alone)."""
    schema = plan.schema
    out = dict(columns)
    for column, margin in extra.one_ways.items():
        cells = np.repeat(np.arange(margin.size, dtype=np.int64), margin)
        if cells.size != rows:
            raise InternalError("a new column's marginal does not have the records' total")
        held = next((a for a in ancestors(schema, column) if a in out), None)
        if held is None:
            codes = rng.permutation(cells)
        else:  # within its parent's cells: the parent's counts are the records'
            parent_of = ancestor_codes(schema, column, held)
            codes = hand_out(out[held].astype(np.int64), cells, parent_of[cells], rng)
        for name, values in _column_block(plan, column, codes).items():
            out.setdefault(name, values)
    for pair, table, new in _tree_order(plan, shape, extra):
        a, b = (pair.first, pair.second) if new == shape.component_of(pair.second) else (
            pair.second, pair.first)  # fmt: skip
        row_margin, col_margin = margins[a], margins[b]
        whole = round_two_way(rake(np.maximum(table, 0.0), row_margin, col_margin),
                              row_margin, col_margin)  # fmt: skip
        width = whole.shape[1]
        cells = np.repeat(np.arange(whole.size, dtype=np.int64), whole.ravel())
        b_values = hand_out(out[a].astype(np.int64), cells % width, cells // width, rng)
        block = [n for n in out if n in shape.components[new]]
        taken = hand_out(b_values, np.arange(rows), out[b].astype(np.int64), rng)
        for name in block:
            out[name] = out[name][taken]
    return out


def _tree_order(
    plan: Plan, shape: ExtraShape, extra: ExtraMarginals
) -> list[tuple[Pair, np.ndarray, int]]:
    """The chosen pairs from the first component outwards (each joins one new component to
    the rows placed so far), each with its noisy table oriented (placed side × new side) and
    the new side's component."""
    schema = plan.schema
    placed = {0}
    left = list(extra.pairs)
    order = []
    while left:
        crossing = [
            i
            for i, (p, _) in enumerate(left)
            if (shape.component_of(p.first) in placed) != (shape.component_of(p.second) in placed)
        ]
        at = crossing[0] if crossing else None
        if at is None:
            raise InternalError("the chosen pairs do not form a tree over the components")
        pair, noisy = left.pop(at)
        table = np.asarray(noisy, dtype=np.float64).reshape(
            schema[pair.first].size, schema[pair.second].size
        )
        first, second = shape.component_of(pair.first), shape.component_of(pair.second)
        new = second if first in placed else first
        order.append((pair, table if new == second else table.T, new))
        placed.add(new)
    return order
