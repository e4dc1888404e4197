"""What a synthesis share measures (issue 38.6), from the plan alone (no data).

With `postprocess.synthetic: {budget_share: S}` the microdata hold every declared column. The
published tables' closures group the columns they hold into *components* (columns joined by
some table, through their ancestors too). A declared column no table holds is *new*: its
1-way marginal is measured (its finest new column's, which fixes its new ancestors); one
whose ancestor a table holds joins that table's component (its parent's margin places it),
any other is a component of its own.

The components are then joined as MST joins its (McKenna et al. 2021): a spanning tree of
extra 2-way marginals, one per join, each chosen privately among the pairs of columns in two
components not yet joined (`measure`), then measured. The candidates are every such pair
whose cells no structural zero names (a zero across two sides would need a rounding the
records cannot promise); every candidate is counted from the data beside the tables
(`accounting.counted`), and the score of every pair is computed once.
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
ONE_WAY_PREFIX = "synthesis.column."
PAIR_PREFIX = "synthesis.pair."


@dataclass(frozen=True)
class Pair:
    """A candidate extra marginal: two columns of different components, and its counted name."""

    name: str
    first: str
    second: str

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

    @property
    def joins(self) -> int:
        """Extra pairs chosen and measured: one fewer than the components."""
        return len(self.components) - 1

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
    pairs: list[Pair] = []
    for first, second in itertools.combinations(columns, 2):
        a = next(i for i, g in enumerate(components) if first in g)
        b = next(i for i, g in enumerate(components) if second in g)
        if a != b and not _crosses_zero(plan, first, second):
            pairs.append(Pair(f"{PAIR_PREFIX}{len(pairs) + 1}", first, second))
    shape = ExtraShape(columns, new, components, tuple(pairs))
    if not new and shape.joins == 0:
        raise PlanError(
            "postprocess.synthetic.budget_share has nothing to measure: the tables already hold "
            "every declared column and join them all; use `synthetic: true` instead."
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
    """Cells of the `joins` largest candidates together: the most the chosen pairs can hold."""
    sizes = sorted((pair_cells(plan, p.by) for p in shape.candidates), reverse=True)
    return sum(sizes[: shape.joins])


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
    every candidate scored once (true minus expected counts, then summed), and at most the
    `joins` largest candidates raked (two margins a round) and rounded. 0 without a share."""
    if plan.postprocess.synthetic_share is None:
        return 0
    shape = extra_shape(plan)
    return 2 * candidate_cells(plan, shape) + (2 * RAKE_ROUNDS + 4) * largest_pairs(plan, shape)
