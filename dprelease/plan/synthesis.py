"""What a synthesis share measures (issue 38.6), from the plan alone (no data).

With `postprocess.synthetic: {budget_share: S}` the microdata hold every declared column. The
published tables' closures group the columns they hold into *components* (columns joined by
some table, through their ancestors too). A declared column no table holds is *new*: its
1-way marginal is measured (its finest new column's, which fixes its new ancestors); one
whose ancestor a table holds joins that table's component (its parent's margin places it),
any other is a component of its own.

Then `rounds` extra 2-way marginals are chosen privately and measured, one a round, as AIM
chooses its (McKenna et al. 2022; `synthetic.rounds`): the records so far are the model, and
a pair's score is how far the model's estimate of it is from its true counts. A candidate is
every pair of declared columns that no table determines and no structural zero names (a zero
across two sides would need a rounding the records cannot promise): pairs of two components
(MST's joins: `joins` of the rounds must join the components, as a spanning tree does), and
pairs inside one component linked only through other columns (age × education through sex).
The model takes a pair inside a component by redrawing one of its columns, `c`, given the
columns next to it (`neighbours`: every column some table or parent link puts beside `c`,
which then keeps every table that holds `c`): `c` is *movable* when those columns do not
fix it (a county's state is fixed by the county) and the redraw's table (given × pair
cells, `move_cells`) is at most MOVE_CELLS. Every candidate is counted from the data beside
the tables (`accounting.counted`), once; `rounds` is MST's count of pairs, one fewer than the
columns (at least `joins`, at most the candidates).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from dprelease.errors import PlanError
from dprelease.limits import MAX_SYNTHETIC_CELLS
from dprelease.plan.model import Plan
from dprelease.plan.subtables import Key, ancestors, closure, reduce_key
from dprelease.plan.table_spec import TableSpec

RAKE_ROUNDS = 200  # a chosen pair's table is raked to two margins: converges geometrically
REFIT_ROUNDS = 40  # a pair inside a group: its 3-target fit (pair, and both given margins)
MOVE_CELLS = 100_000  # the most cells of a redraw's table (given cells × the pair's cells)
ONE_WAY_PREFIX = "synthesis.column."
PAIR_PREFIX = "synthesis.pair."


@dataclass(frozen=True)
class Pair:
    """A candidate extra marginal: two columns no table determines, its counted name, and
    which of its columns the model may redraw given their neighbours (`movable`)."""

    name: str
    first: str
    second: str
    movable: tuple[str, ...] = ()

    @property
    def by(self) -> Key:
        return (self.first, self.second)


@dataclass(frozen=True)
class ExtraShape:
    """The synthesis' measurements as far as the plan fixes them."""

    columns: tuple[str, ...]  # the microdata's columns: every declared column, plan order
    new: tuple[str, ...]  # finest new columns: one 1-way measurement each
    components: tuple[frozenset[str], ...]  # groups the published tables (and parents) join
    candidates: tuple[Pair, ...]
    neighbours: dict[str, frozenset[str]]  # per column: the columns a redraw keeps it beside

    @property
    def joins(self) -> int:
        """Rounds that must join two groups: one fewer than the components."""
        return len(self.components) - 1

    @property
    def rounds(self) -> int:
        """Extra pairs chosen and measured: one fewer than the columns (MST's spanning tree),
        at least `joins`, at most the candidates."""
        return max(self.joins, min(len(self.candidates), len(self.columns) - 1))

    def component_of(self, column: str) -> int:
        return next(i for i, group in enumerate(self.components) if column in group)

    def one_way_name(self, column: str) -> str:
        """Its counted name (by position: a column's name may be long)."""
        return f"{ONE_WAY_PREFIX}{self.new.index(column) + 1}"


def declared_columns(plan: Plan) -> tuple[str, ...]:
    """Every column the plan declares but the unit's id, in plan order."""
    return tuple(n for n in plan.schema.names if n != plan.unit.column)


def _components(plan: Plan, new: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """Union of the tables' closures and the new columns' closures that overlap."""
    schema = plan.schema
    groups = [closure(schema, spec.by) for spec in plan.tables if spec.by]
    groups += [closure(schema, (name,)) for name in new]
    merged: list[set[str]] = []
    for group in groups:
        touching = [m for m in merged if m & group]
        joined = set(group).union(*touching)
        merged = [m for m in merged if not m & group] + [joined]
    order = {name: i for i, name in enumerate(schema.names)}
    return tuple(frozenset(m) for m in sorted(merged, key=lambda m: min(order[n] for n in m)))


def _crosses_zero(plan: Plan, first: str, second: str) -> bool:
    """A structural zero names columns on both sides of the pair."""
    schema = plan.schema
    side_a, side_b = closure(schema, (first,)), closure(schema, (second,))
    return any(set(z.columns) & side_a and set(z.columns) & side_b for z in plan.structural_zeros)


def neighbours(plan: Plan, new: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per declared column: the other columns of every table closure (and new column's
    closure) that holds it, and its own ancestors."""
    schema = plan.schema
    edges = [closure(schema, spec.by) for spec in plan.tables if spec.by]
    edges += [closure(schema, (name,)) for name in new]
    out = {}
    for name in declared_columns(plan):
        near = set(ancestors(schema, name)).union(*(e for e in edges if name in e))
        out[name] = frozenset(near - {name})
    return out


def move_cells(plan: Plan, given: frozenset[str], first: str, second: str) -> int:
    """Cells of a redraw's table: the given columns' (finest) cells × the pair's."""
    return pair_cells(plan, reduce_key(plan.schema, given)) * pair_cells(plan, (first, second))


def _movable(plan: Plan, near: dict[str, frozenset[str]], pair: tuple[str, str]) -> tuple[str, ...]:
    """The pair's columns the model may redraw given their neighbours (plan order)."""
    schema = plan.schema
    out = []
    for moved in pair:
        given = near[moved]
        if moved in closure(schema, given):
            continue  # its neighbours fix it (a state beside its counties)
        if move_cells(plan, given, *pair) <= MOVE_CELLS:
            out.append(moved)
    return tuple(out)


def _determined(plan: Plan, first: str, second: str) -> bool:
    """The pair is a table's sub-table, or one column is the other's ancestor."""
    schema = plan.schema
    if first in closure(schema, (second,)) or second in closure(schema, (first,)):
        return True
    return any({first, second} <= closure(schema, spec.by) for spec in plan.tables)


def extra_shape(plan: Plan) -> ExtraShape:
    """The synthesis share's measurements (see the module docstring). Only for a plan with a
    share; refuses one with nothing to measure."""
    schema = plan.schema
    columns = declared_columns(plan)
    published = closure(schema, frozenset(n for spec in plan.tables for n in spec.by))
    unheld = [n for n in columns if n not in published]
    implied = {a for n in unheld for a in ancestors(schema, n)}
    new = tuple(n for n in unheld if n not in implied)
    components = _components(plan, new)
    near = neighbours(plan, new)
    pairs: list[Pair] = []
    for first, second in itertools.combinations(columns, 2):
        if _determined(plan, first, second) or _crosses_zero(plan, first, second):
            continue
        a = next(i for i, g in enumerate(components) if first in g)
        b = next(i for i, g in enumerate(components) if second in g)
        movable = _movable(plan, near, (first, second))
        if a != b or movable:
            pairs.append(Pair(f"{PAIR_PREFIX}{len(pairs) + 1}", first, second, movable))
    shape = ExtraShape(columns, new, components, tuple(pairs), near)
    if not new and not pairs:
        raise PlanError(
            "postprocess.synthetic.budget_share has nothing to measure: the tables already hold "
            "every declared column and every pair of them; use `synthetic: true` instead."
        )
    reached = {shape.component_of(n) for p in pairs for n in p.by}
    if shape.joins and len(reached) < len(components):
        raise PlanError(
            "postprocess.synthetic.budget_share cannot join every column: structural zeros "
            "name every pair that would; drop a zero or use `synthetic: true`."
        )
    cells = candidate_cells(plan, shape)
    if cells > MAX_SYNTHETIC_CELLS:
        raise PlanError(
            f"postprocess.synthetic.budget_share would count {cells:,} cells of candidate "
            f"pairs, above the limit of {MAX_SYNTHETIC_CELLS:,}; declare fewer or smaller "
            "columns, or join them in tables."
        )
    return shape


def pair_cells(plan: Plan, by: Key) -> int:
    return math.prod(plan.schema[n].size for n in reduce_key(plan.schema, frozenset(by)))


def candidate_cells(plan: Plan, shape: ExtraShape) -> int:
    """Cells of every candidate pair together (counted, then scored once)."""
    return sum(pair_cells(plan, p.by) for p in shape.candidates)


def largest_pairs(plan: Plan, shape: ExtraShape) -> int:
    """Cells of the `rounds` largest candidates together: the most the chosen pairs can hold."""
    sizes = sorted((pair_cells(plan, p.by) for p in shape.candidates), reverse=True)
    return sum(sizes[: shape.rounds])


def synthesis_tables(plan: Plan) -> tuple[TableSpec, ...]:
    """What the synthesis share counts beside the tables (never published): each new column's
    1-way marginal and every candidate pair. Empty without a share."""
    if plan.postprocess.synthetic_share is None:
        return ()
    shape = extra_shape(plan)
    one_ways = [TableSpec(name=shape.one_way_name(n), by=(n,)) for n in shape.new]
    return (*one_ways, *(TableSpec(name=p.name, by=p.by) for p in shape.candidates))


def extra_work(plan: Plan) -> int:
    """Cell updates the share's work takes, from the plan (admission, `junction.admit_fit`):
    every candidate scored each round (true minus the model's counts, then summed), at most
    the `rounds` largest candidates raked (two margins a round) and rounded, and each round's
    redraw at most MOVE_CELLS cells fitted (three targets a round, then two margins) and
    rounded. 0 without a share. The records' tabulations, which grow with the rows, are
    `rows_work`'s."""
    if plan.postprocess.synthetic_share is None:
        return 0
    shape = extra_shape(plan)
    scoring = 2 * shape.rounds * candidate_cells(plan, shape)
    joining = (2 * RAKE_ROUNDS + 4) * largest_pairs(plan, shape)
    redraws = (5 * REFIT_ROUNDS + 4) * MOVE_CELLS * (shape.rounds - shape.joins)
    return scoring + joining + redraws


def rows_work(plan: Plan, rows: int) -> int:
    """Row visits the rounds take: every candidate's tabulation of the records (the model's
    estimate) once, then again each round after a redraw moves its columns (at most all of
    them each round), and the redraw's own passes over the rows."""
    if plan.postprocess.synthetic_share is None:
        return 0
    shape = extra_shape(plan)
    return rows * ((shape.rounds + 1) * len(shape.candidates) + 8 * shape.rounds)
