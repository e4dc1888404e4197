"""Read an edge list: a CSV (or Parquet, Excel) whose first two columns are the end nodes.

CONFIDENTIAL: the graph is the data holder's own data.

The graph is **undirected and simple**, decided here once for risk and release alike:

- A node is the text of its cell with the surrounding white space removed (`01` and `1` are two
  nodes). An empty cell is refused: an edge needs two end nodes.
- A **self-loop** (both ends the same node) is refused with a one-line error that gives its row,
  not dropped: a loop means the file is not what the tool thinks it is (a directed list with
  `a,a` "stays", a wrong column pair), and dropping it silently would change degrees by 2.
- A **repeated edge** (`a,b` twice, or `a,b` and `b,a`) is one edge: an undirected simple graph
  has at most one edge per pair. The repeats are merged, and the risk view says how many were.
- Other columns (a weight, a date) are read and ignored.
- The nodes are the end nodes of the edges: an edge list cannot hold a node with no edge.

Node ids are the nodes' ranks in the sorted order of their texts, so that the order of the
edges (lexicographic in (smaller id, larger id), `EdgeList.first`/`second`) is a fixed order
on pairs of texts that does not depend on which other edges are present: the node-DP projection
(`dprelease.graph.degrees.project`) relies on it.

The reading (house limits included: `--max-data-mb`, `--max-rows`, an empty or header-only
file) is `dprelease.data.read.read_data`; the ledger's key is the fingerprint of the canonical
edge set (`canonical_fingerprint`): the same graph however its edge list is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dprelease.data.fingerprint import RecordFingerprint, fingerprint_table
from dprelease.data.read import SizeLimits, read_data
from dprelease.errors import DataError
from dprelease.ledger.files import dataset_key_of_file


@dataclass(frozen=True, repr=False)
class EdgeList:
    """CONFIDENTIAL: an undirected simple graph read from an edge list.

    `first[i] < second[i]` are the node ids of edge i, the edges sorted and distinct; `labels`
    are the node texts by id (sorted). `rows` is the number of rows read (before merging
    repeats); `fingerprint` and `file_sha256` key the ledger's account.
    """

    labels: pa.Array = field(repr=False)
    first: np.ndarray = field(repr=False)
    second: np.ndarray = field(repr=False)
    rows: int
    fingerprint: RecordFingerprint
    file_sha256: str | None = None

    @property
    def nodes(self) -> int:
        return len(self.labels)

    @property
    def edges(self) -> int:
        return len(self.first)

    @property
    def merged(self) -> int:
        """Rows that repeated an edge already read (either direction)."""
        return self.rows - self.edges

    def degrees(self) -> np.ndarray:
        """Each node's degree (int64, by node id)."""
        both = np.concatenate([self.first, self.second])
        counted: np.ndarray = np.bincount(both, minlength=self.nodes).astype(np.int64)
        return counted

    def __repr__(self) -> str:
        return f"EdgeList(<confidential>, key={self.fingerprint.key()[:12]}…)"


def read_edges(
    source: str | Path | bytes,
    *,
    filename: str | None = None,
    limits: SizeLimits | None = None,
    fingerprint: bool = True,
) -> EdgeList:
    """Read and check an edge list (see the module docstring); one-line DataError otherwise.

    `fingerprint=False` (a risk measure, which charges nothing) skips the ledger's key: the
    graph's fingerprint is then empty, and a charge with it is refused."""
    limits = limits or SizeLimits()
    if not isinstance(source, bytes) and not Path(source).is_file():
        raise DataError(f"Edge list '{source}' does not exist.")
    table = read_data(
        source, filename=filename, max_bytes=limits.max_bytes, max_rows=limits.max_rows
    )
    where = _where(source, filename)
    if table.num_columns < 2:
        raise DataError(
            f"{where} has one column; an edge list needs two: the two end nodes of each edge "
            "(further columns are ignored)."
        )
    return edge_list(table, where, _sha256(source) if fingerprint else None, fingerprint)


def edge_list(
    table: pa.Table, where: str, file_sha256: str | None = None, fingerprint: bool = True
) -> EdgeList:
    """The graph of a table read already: its first two columns are the end nodes."""
    rows = table.num_rows
    if rows == 0:
        raise DataError(f"{where} has no edges; give at least one row of two end nodes.")
    # Work on each column's dictionary (its distinct texts), not on every row's text.
    ends = table.select([0, 1]).unify_dictionaries()
    coded = [_dictionary_and_indices(ends.column(i), where) for i in (0, 1)]
    texts = [_node_text(dictionary) for dictionary, _ in coded]
    empty = pc.equal(pc.utf8_length(texts[0]), 0).to_numpy(zero_copy_only=False)[coded[0][1]]
    empty |= pc.equal(pc.utf8_length(texts[1]), 0).to_numpy(zero_copy_only=False)[coded[1][1]]
    if empty.any():
        _refuse_empty(int(np.argmax(empty)), where)
    encoded = pc.dictionary_encode(pa.concat_arrays(texts))
    labels = encoded.dictionary
    order = np.asarray(pc.sort_indices(labels), dtype=np.int64)
    rank = np.empty(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(labels), dtype=np.int64)
    ids = rank[np.asarray(encoded.indices, dtype=np.int64)]  # by dictionary entry
    u = ids[: len(texts[0])][coded[0][1]]
    v = ids[len(texts[0]) :][coded[1][1]]
    loops = np.flatnonzero(u == v)
    if loops.size:
        raise DataError(
            f"Row {int(loops[0]) + 1} of {where} is a self-loop (both end nodes are the same); "
            f"an edge list of a simple graph joins two different nodes: remove the "
            f"{'loop' if loops.size == 1 else f'{loops.size:,} loops'} (row numbers count the "
            "rows after the header)."
        )
    n = len(labels)
    codes = np.sort(np.minimum(u, v) * n + np.maximum(u, v))  # (smaller, larger) in order
    # Distinct by sort and compare: numpy 2's hash-based np.unique is ~100× slower here.
    codes = codes[np.concatenate(([True], codes[1:] != codes[:-1]))]
    sorted_labels = labels.take(pa.array(order))
    first, second = codes // n, codes % n
    return EdgeList(
        labels=sorted_labels,
        first=first,
        second=second,
        rows=rows,
        fingerprint=canonical_fingerprint(sorted_labels, first, second)
        if fingerprint
        else RecordFingerprint(),
        file_sha256=file_sha256,
    )


def canonical_fingerprint(
    labels: pa.Array, first: np.ndarray, second: np.ndarray
) -> RecordFingerprint:
    """The ledger's key of a graph: the fingerprint of its canonical edge set (trimmed end
    nodes, each pair undirected as (smaller, larger), distinct, sorted), so that the same
    graph written `v,u`, with an edge repeated, its rows shuffled, its columns renamed or a
    weight added is one account (issue 34)."""
    edges = pa.table({"u": labels.take(pa.array(first)), "v": labels.take(pa.array(second))})
    return fingerprint_table(edges)


def _dictionary_and_indices(column: pa.ChunkedArray, where: str) -> tuple[pa.Array, np.ndarray]:
    """A column's distinct values and each row's index into them (int64); a missing value
    (a Parquet or Excel null) is refused as an empty end node."""
    if column.null_count:
        missing = pc.is_null(column).to_numpy(zero_copy_only=False)
        _refuse_empty(int(np.argmax(missing)), where)
    if not pa.types.is_dictionary(column.type):
        column = pa.chunked_array([pc.dictionary_encode(column.combine_chunks())])
    indices = [np.asarray(chunk.indices, dtype=np.int64) for chunk in column.chunks]
    dictionary = column.chunks[0].dictionary  # one dictionary: unified by the caller
    return dictionary, np.concatenate(indices)


def _refuse_empty(row: int, where: str) -> None:
    raise DataError(
        f"Row {row + 1} of {where} has an empty end node; every edge needs two nodes (a name "
        "or a number in each of the first two columns)."
    )


def _node_text(values: pa.Array) -> pa.Array:
    """Values as trimmed text (numbers as they were written, if read as numbers)."""
    trimmed: pa.Array = pc.utf8_trim_whitespace(values.cast(pa.string()))
    return trimmed


def _where(source: str | Path | bytes, filename: str | None) -> str:
    name = filename or ("the edge list" if isinstance(source, bytes) else Path(source).name)
    return f"'{name}'" if filename or not isinstance(source, bytes) else name


def _sha256(source: str | Path | bytes) -> str:
    """The file's SHA-256 (the key of a format-1 ledger's account, as `release` computes it)."""
    if isinstance(source, bytes):
        import hashlib

        return hashlib.sha256(source).hexdigest()
    return dataset_key_of_file(source)
