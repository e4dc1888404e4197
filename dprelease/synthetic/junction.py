"""The synthetic model's shape, from the plan alone: cliques and their junction tree (no data).

The model is a graphical model over the plan's columns whose cliques hold the published
tables. A table over `by` involves its columns and their ancestors (county implies state), its
*closure*; two columns interact when some table's closure holds both. When the closures form
an acyclic hypergraph (the bundled sample; every workload of nested or star-shaped tables),
the maximal closures are already the cliques of a junction tree, and the published tables,
being consistent on every sub-table they share, are exactly that model's clique marginals:
the microdata can match every cell. When the tables form a cycle (age × sex, sex × race,
race × age), the interaction graph is triangulated (greedy min-fill) and its maximal cliques,
larger than any table, are fitted by iterative proportional fitting (`fit`); some cells may
then be missed by a little, and the release says which.

Everything here follows from the plan (public), so the model's size is bounded before any
noise is drawn (`check_model`, `limits.MAX_SYNTHETIC_CELLS`), and so is the fit's work: the
rounds of iterative proportional fitting that fit `limits.SYNTHETIC_FIT_WORK` (`admit_fit`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import PlanError, quote
from dprelease.limits import (
    MAX_SYNTHETIC_CELLS,
    SYNTHETIC_FIT_BYTES,
    SYNTHETIC_FIT_WORK,
    SYNTHETIC_IPF_ROUNDS,
    SYNTHETIC_MIN_ROUNDS,
)
from dprelease.plan.model import Plan
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import Key, closure, is_partial, reduce_key
from dprelease.plan.synthesis import declared_columns, extra_work, rows_work


@dataclass(frozen=True)
class Node:
    """One clique of the junction tree: its key (finest columns) and the separator with its
    parent (the sub-table it shares with the cliques placed before it; () for a root)."""

    key: Key
    columns: frozenset[str]  # the key's closure
    separator: Key
    cells: int
    parent: int | None  # index of the parent node in `JunctionTree.nodes`; None for a root


@dataclass(frozen=True)
class JunctionTree:
    """Cliques in placement order (every node's parent comes before it)."""

    nodes: tuple[Node, ...]
    exact: bool  # True when every clique is a published table's closure (acyclic workload)
    rounds: int = SYNTHETIC_IPF_ROUNDS  # the most IPF rounds of a fitted clique (`admit_fit`)

    @property
    def cells(self) -> int:
        return sum(node.cells for node in self.nodes)


def microdata_columns(plan: Plan) -> tuple[str, ...]:
    """The microdata's columns: every column a count table uses, and its ancestors, in plan
    order. Columns no table uses are left out: nothing was measured about them."""
    used = closure(plan.schema, frozenset(n for spec in plan.tables for n in spec.by))
    return tuple(name for name in plan.schema.names if name in used)


def _maximal(sets: list[frozenset[str]]) -> list[frozenset[str]]:
    unique = sorted(set(sets), key=lambda s: (-len(s), sorted(s)))
    kept: list[frozenset[str]] = []
    for candidate in unique:
        if not any(candidate <= other for other in kept):
            kept.append(candidate)
    return kept


def _triangulated_cliques(
    columns: tuple[str, ...], edges: list[frozenset[str]]
) -> list[frozenset[str]]:
    """Maximal cliques of the interaction graph made chordal by greedy min-fill elimination.
    On an already chordal graph (an acyclic workload) min-fill adds no edge."""
    neighbours: dict[str, set[str]] = {c: set() for c in columns}
    for group in edges:
        for a, b in itertools.combinations(group, 2):
            neighbours[a].add(b)
            neighbours[b].add(a)
    left = set(columns)
    cliques: list[frozenset[str]] = []
    while left:

        def fill(v: str) -> int:
            near = neighbours[v] & left
            return sum(1 for a, b in itertools.combinations(near, 2) if b not in neighbours[a])

        vertex = min(sorted(left), key=lambda v: (fill(v), len(neighbours[v] & left)))
        near = neighbours[vertex] & left
        for a, b in itertools.combinations(near, 2):
            neighbours[a].add(b)
            neighbours[b].add(a)
        cliques.append(frozenset(near | {vertex}))
        left.remove(vertex)
    return _maximal(cliques)


def _tree_order(schema: Schema, cliques: list[frozenset[str]]) -> tuple[Node, ...]:
    """A maximum spanning tree on |shared columns| (Kruskal), placed from the largest clique."""
    count = len(cliques)
    parent_of = list(range(count))

    def find(i: int) -> int:
        while parent_of[i] != i:
            parent_of[i] = parent_of[parent_of[i]]
            i = parent_of[i]
        return i

    pairs = sorted(
        itertools.combinations(range(count), 2),
        key=lambda p: (-len(cliques[p[0]] & cliques[p[1]]), p),
    )
    adjacent: dict[int, list[int]] = {i: [] for i in range(count)}
    for a, b in pairs:
        root_a, root_b = find(a), find(b)
        if root_a != root_b and cliques[a] & cliques[b]:
            parent_of[root_a] = root_b
            adjacent[a].append(b)
            adjacent[b].append(a)
    sizes = [_cells(schema, reduce_key(schema, c)) for c in cliques]
    placed: list[Node] = []
    position: dict[int, int] = {}  # clique index → its place in `placed`
    seen: set[int] = set()
    for start in sorted(range(count), key=lambda i: (-sizes[i], i)):  # one tree per component
        if start in seen:
            continue
        seen.add(start)
        queue: list[tuple[int, int | None]] = [(start, None)]
        while queue:
            index, parent = queue.pop(0)
            shared = frozenset() if parent is None else cliques[index] & cliques[parent]
            key = reduce_key(schema, cliques[index])
            at = None if parent is None else position[parent]
            position[index] = len(placed)
            placed.append(Node(key, cliques[index], reduce_key(schema, shared), sizes[index], at))
            for other in sorted(adjacent[index]):
                if other not in seen:
                    seen.add(other)
                    queue.append((other, index))
    return tuple(placed)


def _cells(schema: Schema, key: Key) -> int:
    return math.prod(schema[name].size for name in key)


def junction_tree(plan: Plan) -> JunctionTree:
    """The junction tree of the plan's count tables (see the module's docstring)."""
    schema = plan.schema
    closures = [closure(schema, spec.by) for spec in plan.tables]
    columns = microdata_columns(plan)
    cliques = _triangulated_cliques(columns, [c for c in closures if len(c) > 1])
    tables = set(_maximal([c for c in closures if c]))
    cliques = [c for c in cliques if c] or [frozenset()]
    exact = all(c in tables for c in cliques if c) and all(
        any(t <= c for c in cliques) for t in tables
    )
    return JunctionTree(_tree_order(schema, cliques), exact)


def check_model(plan: Plan) -> JunctionTree:
    """The model of a plan with `postprocess.synthetic`, or a one-line error: no count table to
    fit, a discovered column that leaves rows out, or a model above the memory bound."""
    if not plan.tables:
        raise PlanError(
            "postprocess.synthetic needs measurements to fit: the plan has no count table "
            "(statistics alone cannot make microdata); add a table or switch synthetic off."
        )
    with_share = plan.postprocess.synthetic_share is not None  # issue 38.6: every column
    columns = declared_columns(plan) if with_share else microdata_columns(plan)
    partial = [n for n in columns if is_partial(plan.schema, n)]
    if partial:
        raise PlanError(
            f"postprocess.synthetic cannot use column {quote(partial[0])}: its discovered domain "
            "leaves rows out; give it an `other:` value or switch synthetic off."
        )
    tree = junction_tree(plan)
    if tree.cells > MAX_SYNTHETIC_CELLS:
        raise PlanError(
            f"postprocess.synthetic: the model over these tables has {tree.cells:,} cells "
            f"(its tables form a cycle that joins them into larger cliques), above the limit "
            f"of {MAX_SYNTHETIC_CELLS:,}; drop a table of the cycle or switch synthetic off."
        )
    return admit_fit(plan, tree)


def published_inside(plan: Plan, node: Node) -> list[tuple[tuple[str, ...], str]]:
    """(by, name) of the published tables whose columns lie inside the clique."""
    return [
        (spec.by, spec.name)
        for spec in plan.tables
        if closure(plan.schema, spec.by) <= node.columns
    ]


def published_as_is(plan: Plan, node: Node) -> tuple[tuple[str, ...], str] | None:
    """The published table that is the clique itself (taken as released, no fit), if any."""
    schema = plan.schema
    for by, name in published_inside(plan, node):
        if reduce_key(schema, by) == node.key and _cells(schema, by) == node.cells:
            return by, name
    return None


def fit_per_round(plan: Plan, tree: JunctionTree) -> int:
    """Cell updates one IPF round makes: each fitted clique's cells once per table inside it
    and once for its separator."""
    return sum(
        (len([by for by, _ in published_inside(plan, node) if by]) + 1) * node.cells
        for node in tree.nodes
        if published_as_is(plan, node) is None
    )


def admit_fit(plan: Plan, tree: JunctionTree) -> JunctionTree:
    """The tree with the IPF rounds its fit may take within SYNTHETIC_FIT_WORK, or a one-line
    PlanError when fewer than SYNTHETIC_MIN_ROUNDS fit, or a clique's cell maps would exceed
    SYNTHETIC_FIT_BYTES. Each round of a fitted clique visits its cells once per table inside
    it and once for its separator; the maps keep 8 bytes per cell for each. A synthesis
    share's work (`extra.extra_work`) is taken off the limit first."""
    per_round = fit_per_round(plan, tree)
    for node in tree.nodes:
        if published_as_is(plan, node) is not None:
            continue
        maps = len([by for by, _ in published_inside(plan, node) if by]) + 1
        if maps * node.cells * 8 > SYNTHETIC_FIT_BYTES:
            raise PlanError(
                f"postprocess.synthetic: fitting the clique {' × '.join(node.key)} "
                f"({node.cells:,} cells, {maps - 1} tables inside) would hold "
                f"{maps * node.cells * 8 / 1e6:,.0f} MB of cell maps, above the limit of "
                f"{SYNTHETIC_FIT_BYTES // 1_000_000:,} MB; drop tables of the cycle or switch "
                "synthetic off."
            )
    extra = extra_work(plan)  # issue 38.6: the synthesis share's scoring and raking first
    if extra > SYNTHETIC_FIT_WORK:
        raise PlanError(
            f"postprocess.synthetic.budget_share: scoring and fitting the extra pairs takes "
            f"{extra:,} cell updates, above the limit of {SYNTHETIC_FIT_WORK:,}; declare fewer "
            "or smaller columns, or join them in tables."
        )
    rounds = min(SYNTHETIC_IPF_ROUNDS, (SYNTHETIC_FIT_WORK - extra) // max(per_round, 1))
    if rounds < SYNTHETIC_MIN_ROUNDS:
        raise PlanError(
            f"postprocess.synthetic: fitting the model's cycles takes {per_round:,} cell updates "
            f"a round; {SYNTHETIC_MIN_ROUNDS} rounds would exceed the limit of "
            f"{SYNTHETIC_FIT_WORK:,}; drop tables of the cycle or switch synthetic off."
        )
    return replace(tree, rounds=int(rounds))


_UPDATE_NS = 7  # one cell update of the fit
_ROW_BYTES_PER_COLUMN = 48  # a synthetic row's value in memory and its CSV text


def synthetic_estimate(plan: Plan, data: DataSize) -> Estimate:
    """Admission's estimate of the synthetic microdata (issue 35): `admit_fit`'s rounds (its
    one-line refusal when they do not fit) and the rows the data announce."""
    if not plan.postprocess.synthetic:
        return Estimate("synthetic", 0, 0, "SYNTHETIC_FIT_WORK", "off")
    tree = admit_fit(plan, check_model(plan))
    extra = extra_work(plan)  # issue 38.6: the share's candidates, scored, and its pairs
    rows = data.rows or 0
    work = (tree.rounds * fit_per_round(plan, tree) + extra + rows_work(plan, rows)) * _UPDATE_NS
    columns = len(declared_columns(plan) if extra else microdata_columns(plan))
    memory = rows * columns * _ROW_BYTES_PER_COLUMN + extra * 8
    return Estimate("synthetic", work, memory, "SYNTHETIC_FIT_WORK", f"{tree.rounds} rounds")


register("synthetic", synthetic_estimate)
