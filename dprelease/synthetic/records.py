"""Records from the model's integer clique tables: one row per synthetic person, joined clique
by clique along the junction tree.

The first clique's table becomes its rows (each cell repeated by its count). Each next clique
shares a separator with the rows placed so far, and its table sums to exactly their counts on
that separator (`fit`), so within every separator cell there are as many rows as cells to hand
out: the rows, in random order, take the clique's cells one for one. The result holds every
clique's table exactly (hence every published table inside it), and given the separator the
new columns are drawn independently of the old ones: a sample of the junction tree's model.
Vectorised (sorts and `np.repeat`): a million rows take well under a second per clique.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import Key, ancestor_codes, ancestors, cell_map
from dprelease.synthetic.junction import JunctionTree

CODE_TYPE = np.int32


def cell_index(schema: Schema, columns: dict[str, np.ndarray], key: Key, rows: int) -> np.ndarray:
    """Each row's cell in a table over `key` (C order: the last column fastest)."""
    index = np.zeros(rows, dtype=np.int64)
    for name in key:
        index = index * schema[name].size + columns[name]
    return index


def strata(
    schema: Schema, columns: dict[str, np.ndarray], names: Iterable[str]
) -> list[np.ndarray]:
    """The rows' codes of these columns, the one of most values first (`hand_out`'s strata)."""
    ordered = sorted(names, key=lambda name: (-schema[name].size, name))
    return [columns[name] for name in ordered]


def _spread(cells: np.ndarray, cell_keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An order of the cells by key, each key's values spread evenly through it (systematic:
    the k-th of a value's n copies at (k + u)/n, u uniform per value)."""
    order = np.lexsort((cells, cell_keys))
    keys, values = cell_keys[order], cells[order]
    starts_run = np.ones(order.size, dtype=bool)
    starts_run[1:] = (keys[1:] != keys[:-1]) | (values[1:] != values[:-1])
    run = np.cumsum(starts_run) - 1
    starts = np.flatnonzero(starts_run)
    lengths = np.diff(np.append(starts, order.size))
    position = (np.arange(order.size) - starts[run] + rng.random(starts.size)[run]) / lengths[run]
    spread: np.ndarray = order[np.lexsort((position, keys))]
    return spread


def hand_out(
    keys: np.ndarray,
    cells: np.ndarray,
    cell_keys: np.ndarray,
    rng: np.random.Generator,
    by: Sequence[np.ndarray] = (),
) -> np.ndarray:
    """For rows with separator values `keys`, one of `cells` each (cells carry `cell_keys`,
    the same multiset as `keys`). Within each separator value the rows are ordered by `by`
    (`strata`; at random within them) and the cells spread evenly (`_spread`), so that the
    rows of any stratum take the values close to their proportions: the same tables as a
    random pairing, with less sampling noise on the pairs across the separator."""
    row_order = np.lexsort((rng.random(keys.size), *reversed(list(by)), keys))
    cell_order = _spread(cells, cell_keys, rng)
    if not np.array_equal(keys[row_order], cell_keys[cell_order]):
        raise InternalError("the cells handed out do not match the rows' separator counts")
    assigned = np.empty(keys.size, dtype=np.int64)
    assigned[row_order] = cells[cell_order]
    return assigned


def _place(schema: Schema, columns: dict[str, np.ndarray], key: Key, cells: np.ndarray) -> None:
    """Write the codes of a clique's cells, and of their ancestors, into the rows' columns (a
    clique over no column, the grand total, writes none: its rows are only counted)."""
    if not key:
        return
    shape = tuple(schema[name].size for name in key)
    for name, codes in zip(key, np.unravel_index(cells, shape), strict=True):
        columns[name] = codes.astype(CODE_TYPE)
        for above in ancestors(schema, name):
            if above not in columns:
                columns[above] = ancestor_codes(schema, name, above)[codes].astype(CODE_TYPE)


def build_records(
    schema: Schema,
    tree: JunctionTree,
    tables: Sequence[np.ndarray],
    names: tuple[str, ...],
    rng: np.random.Generator,
) -> np.ndarray:
    """Rows × `names` codes (int32), in random row order, whose clique tables are `tables`."""
    columns: dict[str, np.ndarray] = {}
    rows = 0
    for at, (node, table) in enumerate(zip(tree.nodes, tables, strict=True)):
        cells = np.repeat(np.arange(table.size, dtype=np.int64), table)
        if at == 0:
            rows = cells.size
            _place(schema, columns, node.key, rng.permutation(cells))
            continue
        if cells.size != rows:
            raise InternalError("a clique's table does not have the records' total")
        placed = cell_index(schema, columns, node.separator, rows)
        wanted = cell_map(schema, node.key, node.separator)[cells]
        assigned = hand_out(placed, cells, wanted, rng, strata(schema, columns, columns))
        _place(schema, columns, node.key, assigned)
    order = rng.permutation(rows)
    result = np.empty((rows, len(names)), dtype=CODE_TYPE)
    for position, name in enumerate(names):
        result[:, position] = columns[name][order]
    return result
