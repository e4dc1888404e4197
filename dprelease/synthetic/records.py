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

from collections.abc import Sequence

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
        shuffled = rng.permutation(rows)
        row_order = shuffled[np.argsort(placed[shuffled], kind="stable")]
        cell_order = np.argsort(wanted, kind="stable")
        if not np.array_equal(placed[row_order], wanted[cell_order]):
            raise InternalError("a clique's table does not meet the records' separator sums")
        assigned = np.empty(rows, dtype=np.int64)
        assigned[row_order] = cells[cell_order]
        _place(schema, columns, node.key, assigned)
    order = rng.permutation(rows)
    result = np.empty((rows, len(names)), dtype=CODE_TYPE)
    for position, name in enumerate(names):
        result[:, position] = columns[name][order]
    return result
