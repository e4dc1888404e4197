"""Which released tables determine which sub-tables, and the sums that map cells onto them.

A table A *determines* a coarser table B when every column of B is a column of A or an
ancestor of one (via `parent`/`parent_map`, any number of levels): B's cells are then sums of
A's cells. Two tables share the sub-table over the columns both determine; its key keeps only
the finest column of each hierarchy chain (state is implied by county), in plan order.

`Workload` collects the keys that consistency needs: every released table's key and, closed
under "shared by", every sub-table two of them share (the grand total, one cell, is the
coarsest). For each key it picks a *representative*: the released table that defines its
values (a table with exactly that key if there is one, else the smallest that determines it).
Pure numpy: no solver here.

A *partial* column leaves rows out by construction: a discovered domain (`domain: {discover:
...}`) keeps only the values the release found often enough, with no `other`. Summing a table
over a partial column loses those rows, so such a table determines only the sub-tables that
keep every partial column it has: language × sex determines language, never sex or the grand
total (their cells are ≥ the sums, not equal). The rule reads the plan only (which columns are
discovered), never how many rows the data leave out: consistency constraints are public.
A declared domain without `other` is taken to cover its rows (the dashboard's coverage gate
warns when it does not), as binned numeric columns do by clamping.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.schema import CategoricalColumn, Schema

Key = tuple[str, ...]


def ancestors(schema: Schema, name: str) -> tuple[str, ...]:
    """The chain of parents above a column, nearest first (county → state → region)."""
    chain: list[str] = []
    column = schema[name]
    while isinstance(column, CategoricalColumn) and column.parent is not None:
        chain.append(column.parent)
        column = schema[column.parent]
    return tuple(chain)


def closure(schema: Schema, by: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """Every column a table over `by` determines: its own and all their ancestors."""
    return frozenset(by).union(*(ancestors(schema, name) for name in by))


def is_partial(schema: Schema, name: str) -> bool:
    """Whether a column leaves rows out by construction: a discovered domain, no `other`."""
    column = schema[name]
    return (
        isinstance(column, CategoricalColumn)
        and column.domain_source == "discovered"
        and column.other is None
    )


def partial_columns(schema: Schema, by: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """The partial columns a table over `by` carries (its own or their ancestors')."""
    return frozenset(name for name in closure(schema, by) if is_partial(schema, name))


def reduce_key(schema: Schema, columns: frozenset[str] | tuple[str, ...]) -> Key:
    """The finest columns only (drop any that is an ancestor of another), in plan order."""
    implied = set().union(*(ancestors(schema, name) for name in columns))
    return tuple(name for name in schema.names if name in columns and name not in implied)


def determines(schema: Schema, finer: tuple[str, ...], coarser: tuple[str, ...]) -> bool:
    """Whether `coarser`'s cells are sums of `finer`'s: its columns are among `finer`'s (or
    their ancestors), and it keeps every partial column of `finer` (summing one out would
    lose the rows outside its domain)."""
    kept = closure(schema, coarser)
    return set(coarser) <= closure(schema, finer) and partial_columns(schema, finer) <= kept


def shared_key(schema: Schema, a: tuple[str, ...], b: tuple[str, ...]) -> Key | None:
    """The finest sub-table both tables determine (the grand total () if nothing else), or
    None when they share none (one has a partial column the other lacks)."""
    common = closure(schema, a) & closure(schema, b)
    if not (partial_columns(schema, a) | partial_columns(schema, b)) <= common:
        return None
    return reduce_key(schema, common)


def ancestor_codes(schema: Schema, child: str, ancestor: str) -> np.ndarray:
    """For each code of `child`, the code of its ancestor at the `ancestor` level."""
    codes = np.arange(schema[child].size)
    current = schema[child]
    while current.name != ancestor:
        if not isinstance(current, CategoricalColumn) or current.parent_map is None:
            raise InternalError(f"'{ancestor}' is not an ancestor of '{child}'")
        parent = schema[current.parent or ""]
        parent_index = {label: code for code, label in enumerate(parent.labels)}
        step = np.array([parent_index[current.parent_map[label]] for label in current.labels])
        codes = step[codes]
        current = parent
    return codes


def cell_map(schema: Schema, source_by: tuple[str, ...], target: Key) -> np.ndarray:
    """For every cell of a table over `source_by` (C order), its cell in the sub-table `target`.

    The sub-table's count in cell k is the sum of the source cells that map to k.
    """
    shape = tuple(schema[name].size for name in source_by)
    size = math.prod(shape)
    index = np.zeros(size, dtype=np.int64)
    for name in target:
        # the source column that carries `name`: itself, else its nearest descendant
        source = next(
            (s for s in source_by if s == name),
            next((s for s in source_by if name in ancestors(schema, s)), None),
        )
        if source is None:
            raise InternalError(f"table over {source_by} does not determine column '{name}'")
        axis = source_by.index(source)
        inner = math.prod(shape[axis + 1 :])
        codes = np.arange(shape[axis]) if source == name else ancestor_codes(schema, source, name)
        along_axis = np.tile(np.repeat(codes, inner), size // (inner * shape[axis]))
        index = index * schema[name].size + along_axis
    return index


def key_cells(schema: Schema, key: Key) -> int:
    return math.prod(schema[name].size for name in key)


@dataclass(frozen=True)
class Workload:
    """The released tables' keys, the sub-tables they share, and who represents each one."""

    schema: Schema
    bys: tuple[tuple[str, ...], ...]  # released tables' columns, in plan order
    keys: tuple[Key, ...] = field(init=False)  # coarse to fine
    representative: dict[Key, int] = field(init=False)
    _maps: dict[tuple[int, Key], np.ndarray] = field(init=False, repr=False)
    _covers: Callable[[tuple[str, ...], Key], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Each key's closure and partial columns once, and each pair of keys once (issue 35:
        # 220 three-way tables made 5 M calls of `closure`, 15 s per workload): the same
        # rules as `shared_key` and `determines`, on cached sets.
        schema = self.schema
        closures: dict[tuple[str, ...], frozenset[str]] = {}
        partials: dict[tuple[str, ...], frozenset[str]] = {}
        reduced: dict[frozenset[str], Key] = {}

        def closed(key: tuple[str, ...]) -> frozenset[str]:
            found = closures.get(key)
            if found is None:
                found = closures[key] = closure(schema, key)
                partials[key] = frozenset(n for n in found if is_partial(schema, n))
            return found

        def shared(a: Key, b: Key) -> Key | None:
            common = closed(a) & closed(b)
            if not (partials[a] | partials[b]) <= common:
                return None
            found = reduced.get(common)
            if found is None:
                found = reduced[common] = reduce_key(schema, common)
            return found

        def covers(by: tuple[str, ...], key: Key) -> bool:  # `determines(schema, by, key)`
            return set(key) <= closed(by) and partials[by] <= closed(key)

        keys = {reduce_key(schema, by) for by in self.bys}
        frontier = set(keys)
        seen: set[frozenset[Key]] = set()
        while frontier:  # close under "shared by": sub-tables of shared sub-tables are shared
            new = set()
            for a, b in itertools.product(frontier, list(keys)):
                pair = frozenset((a, b))
                if pair in seen:
                    continue
                seen.add(pair)
                key = shared(a, b)
                if key is not None:
                    new.add(key)
            frontier = new - keys
            keys |= new
        # a coarser key has a strictly smaller closure: sorting by its size is topological
        ordered = sorted(keys, key=lambda k: (len(closed(k)), key_cells(schema, k), k))
        representative = {}
        for key in ordered:
            candidates = [i for i, by in enumerate(self.bys) if covers(by, key)]
            exact = [i for i in candidates if reduce_key(self.schema, self.bys[i]) == key]
            pool = exact or candidates
            representative[key] = min(pool, key=lambda i: (self.cells(i), i))
        object.__setattr__(self, "keys", tuple(ordered))
        object.__setattr__(self, "representative", representative)
        object.__setattr__(self, "_maps", {})
        object.__setattr__(self, "_covers", covers)  # its caches serve the queries below

    def cells(self, table: int) -> int:
        return math.prod(self.schema[name].size for name in self.bys[table])

    def key_of(self, table: int) -> Key:
        return reduce_key(self.schema, self.bys[table])

    def cell_map(self, table: int, key: Key) -> np.ndarray:
        """Cached `cell_map` from a released table onto a sub-table key."""
        found = self._maps.get((table, key))
        if found is None:
            found = cell_map(self.schema, self.bys[table], key)
            self._maps[(table, key)] = found
        return found

    def determined_keys(self, table: int) -> tuple[Key, ...]:
        """The sub-table keys a released table determines (its own included), coarse first."""
        return tuple(k for k in self.keys if self._covers(self.bys[table], k))

    def links(self) -> list[tuple[int, Key, int]]:
        """(table, key, representative): each table must agree with the key's representative.

        Together these say that every two released tables agree on every sub-table they share:
        both agree with the representative of their shared key.
        """
        return [
            (table, key, self.representative[key])
            for table in range(len(self.bys))
            for key in self.determined_keys(table)
            if self.representative[key] != table
        ]

    def predecessors(self, key: Key) -> tuple[Key, ...]:
        """The keys just below `key`: determined by it, with no other such key in between."""
        below = [k for k in self.keys if k != key and self._covers(key, k)]
        return tuple(k for k in below if not any(o != k and self._covers(o, k) for o in below))
