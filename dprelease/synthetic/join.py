"""Records of every declared column (issue 38.6): the published tables' records, joined to the
new columns, and groups of columns joined to each other along the pairs the share chose.

The published tables' records (`microdata.synthesize`) hold one block of columns per
component; blocks are independent of each other. A new column whose parent a table holds is
handed out within its parent's cells (its whole marginal sums to the parent's counts there);
any other new column starts as a block of its own, its rows its whole marginal in random
order (`place_new_columns`). A chosen pair (a, b) across two groups joins b's group to a's
(`join_groups`): its noisy counts, clipped at zero, are raked to the records' margins of a and
of b (iterative proportional fitting on two margins), rounded to whole numbers keeping both
margins exactly (`round_two_way`), and every row with a = i takes one of the b values the
table gives row i; then b's group is re-paired to the rows by b. A group keeps its own rows
and joint distribution, so every published table still tabulates as before, exactly; the
pair's joint follows its measurement. (A pair inside one group: `redraw`.)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.subtables import ancestor_codes, ancestors
from dprelease.plan.synthesis import RAKE_ROUNDS
from dprelease.synthetic.records import CODE_TYPE, hand_out, strata

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
    """Whole numbers ≥ 0 with exactly these row and column sums, near `values`: `values`
    shrunk where a row or column sums to more than its margin (so that no floor is above
    one), floors, the missing units to the largest remainders, then any still missing to
    the largest cells in turn, as many as their row and column still need (a greedy pass
    over every cell always meets both margins, as they add up to the same number)."""
    rows_i, cols_i = rows.astype(np.int64), cols.astype(np.int64)
    values = np.maximum(values.astype(np.float64), 0.0)
    for axis, wanted in ((1, rows_i), (0, cols_i)):
        current = values.sum(axis=axis)
        shrink = np.divide(wanted, current, out=np.ones_like(current), where=current > wanted)
        values = values * (shrink[:, None] if axis == 1 else shrink[None, :])
    table = np.floor(values).astype(np.int64)
    need_row = rows_i - table.sum(axis=1)
    need_col = cols_i - table.sum(axis=0)
    remainder = (values - np.floor(values)).ravel()
    width = table.shape[1]
    for flat in np.argsort(-remainder, kind="stable"):
        if remainder[flat] <= 0:
            break
        i, j = divmod(int(flat), width)
        if need_row[i] > 0 and need_col[j] > 0:
            table[i, j] += 1
            need_row[i] -= 1
            need_col[j] -= 1
    if need_row.any():
        for flat in np.argsort(-values.ravel(), kind="stable"):
            i, j = divmod(int(flat), width)
            step = min(need_row[i], need_col[j])
            if step > 0:
                table[i, j] += step
                need_row[i] -= step
                need_col[j] -= step
    if need_row.any() or need_col.any() or (table < 0).any():
        raise InternalError("a two-way table's margins do not add up to the same total")
    whole: np.ndarray = table
    return whole


def _column_block(plan: Plan, column: str, codes: np.ndarray) -> dict[str, np.ndarray]:
    """A column's codes and its ancestors'."""
    block = {column: codes.astype(CODE_TYPE)}
    for above in ancestors(plan.schema, column):
        block[above] = ancestor_codes(plan.schema, column, above)[codes].astype(CODE_TYPE)
    return block


def place_new_columns(
    plan: Plan,
    columns: dict[str, np.ndarray],
    one_ways: Mapping[str, np.ndarray],
    rows: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """The records with every new column added (see the module docstring). `columns` holds
    the published tables' records (none when the tables are a grand total alone)."""
    schema = plan.schema
    out = dict(columns)
    for column, margin in one_ways.items():
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
    return out


def join_groups(
    plan: Plan,
    out: dict[str, np.ndarray],
    pair: tuple[str, str],
    table: np.ndarray,
    block: frozenset[str],
    rng: np.random.Generator,
) -> None:
    """Join `block` (the group of columns holding `pair[1]`) to the rows by the pair's noisy
    `table` (pair[0] × pair[1] cells), in place: raked to the records' margins of both,
    rounded keeping them, each row with pair[0] = i takes one of the pair[1] values row i of
    the table gives, and the block's rows are re-paired to the rows by pair[1]."""
    a, b = pair
    rows = out[a].size
    row_margin = np.bincount(out[a], minlength=plan.schema[a].size)
    col_margin = np.bincount(out[b], minlength=plan.schema[b].size)
    whole = round_two_way(rake(np.maximum(table, 0.0), row_margin, col_margin),
                          row_margin, col_margin)  # fmt: skip
    width = whole.shape[1]
    cells = np.repeat(np.arange(whole.size, dtype=np.int64), whole.ravel())
    stay = [name for name in out if name not in block]
    b_values = hand_out(out[a].astype(np.int64), cells % width, cells // width, rng,
                        strata(plan.schema, out, stay))  # fmt: skip
    taken = hand_out(b_values, np.arange(rows), out[b].astype(np.int64), rng)
    for name in block:
        out[name] = out[name][taken]
