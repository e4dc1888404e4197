"""CONFIDENTIAL: the tables a reconstruction attacker sees for each small area.

The workload: by default the plan's tables that are published per area of one geography
level (those whose `by` names the level, e.g. county_by_sex for counties), restricted to each
area. With `per_area`, every table of the plan as if it were published for each area too (as
a census publishes the same tables for every county or block). A table keeps its columns other
than geography; columns on the level's own chain (the level and its parents, e.g. state for a
county) are fixed within an area and dropped; a table with a column finer than the level is
left out. Tables with the same columns are kept once.

The exact tables come from the true counts; the DP tables from the release path
(`draw_preview`, labelled a preview and charged to nothing, or a real release's
`tables/*.csv`). Records are the cross product of the workload's columns' domains.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dprelease.accounting.allocation import Allocation
from dprelease.data.count import EncodedData, count
from dprelease.errors import DataError, PlanError
from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn
from dprelease.plan.table_spec import TableSpec
from dprelease.release.draw import draw_preview
from dprelease.stats.allocation import allocate

MAX_RECORD_TYPES = 2_000_000  # cross product of the rebuilt columns' domains


def geography_chain(plan: Plan, level: str) -> tuple[set[str], set[str]]:
    """(the level and its ancestors, the columns finer than the level)."""
    if level not in plan.schema:
        raise PlanError(
            f"The plan has no column '{level}' (columns: {', '.join(plan.schema.names)})."
        )
    up = _ancestors(plan, level)
    finer = {
        c.name
        for c in plan.schema.columns
        if c.name not in up and level in _ancestors(plan, c.name)
    }
    return up, finer


def _ancestors(plan: Plan, name: str) -> set[str]:
    """The column and every parent above it (the schema has checked there is no cycle)."""
    names: set[str] = set()
    current: str | None = name
    while current is not None and current not in names:
        names.add(current)
        column = plan.schema[current]
        current = column.parent if isinstance(column, CategoricalColumn) else None
    return names


def default_level(plan: Plan) -> str:
    """The finest geography column: one with a parent that no other column names as parent."""
    parents = {c.parent for c in plan.schema.columns if isinstance(c, CategoricalColumn)}
    for column in plan.schema.columns:
        if isinstance(column, CategoricalColumn) and column.parent and column.name not in parents:
            return column.name
    raise PlanError(
        "The plan has no geography hierarchy (a column with `parent`); name the area column "
        "with --level."
    )


@dataclass(frozen=True)
class Workload:
    """The per-area tables: each a tuple of the rebuilt columns (empty: the area's total)."""

    level: str
    columns: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]
    left_out: tuple[str, ...] = ()  # tables finer than the level, or survey-weighted

    def sizes(self, plan: Plan) -> tuple[int, ...]:
        return tuple(plan.schema[c].size for c in self.columns)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple("_".join(t) or "total" for t in self.tables)


def workload(
    plan: Plan, level: str, specs: Sequence[TableSpec] | None = None, *, per_area: bool = False
) -> Workload:
    up, finer = geography_chain(plan, level)
    kept: dict[tuple[str, ...], None] = {}
    left_out = []
    for spec in specs if specs is not None else plan.tables:
        # a survey-weighted table's cells are weighted totals, not counts of people: no
        # constraint on the records the attack rebuilds
        weighted = spec.survey_weight is not None
        if weighted or finer & set(spec.by) or not (per_area or level in spec.by):
            left_out.append(spec.name)
            continue
        kept.setdefault(tuple(c for c in spec.by if c not in up), None)
    used = {c for t in kept for c in t}
    columns = tuple(c for c in plan.schema.names if c in used)
    if not kept:
        raise DataError(
            f"No table of the plan is published per '{level}'; add one (e.g. by {level} and "
            "sex), pick another level, or attack every table as if published per area."
        )
    tables = tuple(kept)
    result = Workload(level, columns, tables, tuple(left_out))
    types = math.prod(result.sizes(plan))
    if types > MAX_RECORD_TYPES:
        raise DataError(
            f"The rebuilt records have {types:,} possible kinds (the product of the domains of "
            f"{', '.join(columns)}), more than {MAX_RECORD_TYPES:,}; attack fewer tables."
        )
    return result


@dataclass(frozen=True, repr=False)
class AreaTables:
    """CONFIDENTIAL: per workload table, an (areas × cells) array of published values."""

    label: str
    values: tuple[np.ndarray, ...]

    def __repr__(self) -> str:
        return f"AreaTables({self.label!r}, <confidential>)"


def _cell_index(codes: Sequence[np.ndarray], sizes: Sequence[int], rows: int) -> np.ndarray:
    index = np.zeros(rows, np.int64)
    for column, size in zip(codes, sizes, strict=True):
        index = index * size + column
    return index


def exact_area_tables(
    plan: Plan, load: Workload, encoded: EncodedData, keep: np.ndarray
) -> AreaTables:
    """The true per-area tables over the rows in `keep` (rows with every code present)."""
    areas = plan.schema[load.level].size
    area = encoded.codes[load.level][keep].astype(np.int64)
    values = []
    for table in load.tables:
        sizes = [plan.schema[c].size for c in table]
        cells = math.prod(sizes)
        index = _cell_index([encoded.codes[c][keep] for c in table], sizes, int(keep.sum()))
        flat = np.bincount(area * cells + index, minlength=areas * cells)
        values.append(flat.reshape(areas, cells).astype(np.float64))
    return AreaTables("exact tables", tuple(values))


def per_area_plan(plan: Plan, load: Workload) -> Plan:
    """The plan's budget spent on the workload published per area (weights kept, locks and
    targets dropped: the same total ε over these tables)."""
    weight: dict[tuple[str, ...], float] = {}
    for spec in plan.tables:
        key = tuple(c for c in spec.by if c in load.columns)
        weight[key] = max(weight.get(key, 0.0), spec.weight)
    specs = tuple(
        TableSpec(f"area_{name}", (load.level, *table), weight=weight.get(table, 1.0))
        for name, table in zip(load.names, load.tables, strict=True)
    )
    budget = plan.budget
    if budget.allocation == "targets":
        budget = dataclasses.replace(budget, allocation="weighted")
    return dataclasses.replace(plan, tables=specs, budget=budget)


def _per_area(plan: Plan, level: str, by: Sequence[str], flat: np.ndarray) -> np.ndarray:
    """A table's values as (areas × cells of its non-geography columns): columns on the
    level's chain other than the level are summed out (they are fixed within an area)."""
    up, _ = geography_chain(plan, level)
    values = np.asarray(flat, np.float64).reshape([plan.schema[c].size for c in by])
    drop = tuple(i for i, c in enumerate(by) if c in up and c != level)
    if drop:
        values = values.sum(axis=drop)
    names = [c for c in by if c == level or c not in up]
    values = np.moveaxis(values, names.index(level), 0)
    return values.reshape(values.shape[0], -1)


def _matching(plan: Plan, level: str, specs: Sequence[TableSpec], table: tuple[str, ...]) -> int:
    up, _ = geography_chain(plan, level)
    for i, spec in enumerate(specs):
        if level in spec.by and tuple(c for c in spec.by if c not in up) == table:
            return i
    raise DataError(f"No table by '{level}' gives the columns {', '.join(table) or 'total'}.")


def count_tables_of(plan: Plan) -> tuple[Plan, Allocation]:
    """The plan's count tables with the budget the whole plan gives them. Statistics keep
    their share of ε (as in the release) but are not drawn: the attacker's constraints are
    the published count tables, and a statistic's true values are never read here."""
    if plan.discoveries:
        names = ", ".join(d.column for d in plan.discoveries)
        raise DataError(
            f"The reconstruction attack needs every domain in the plan; {names} is discovered "
            "from the data. Give its domain in the plan to run the attack."
        )
    allocation = allocate(plan)
    if not plan.statistics:
        return plan, allocation
    counts_only = dataclasses.replace(plan, statistics=())
    return counts_only, dataclasses.replace(allocation, statistics=())


def preview_area_tables(
    plan: Plan,
    load: Workload,
    encoded: EncodedData,
    rng: np.random.Generator | None = None,
    *,
    per_area: bool = False,
) -> tuple[AreaTables, float | None]:
    """A PREVIEW draw (numpy noise, charged to nothing, never published) through the release
    path, post-processed as the plan says; and its ε. Without `per_area` it is the plan itself
    (its own allocation); with it, the plan's total budget over the per-area workload."""
    drawn = per_area_plan(plan, load) if per_area else plan
    counts_only, allocation = count_tables_of(drawn)
    preview = draw_preview(counts_only, count(encoded, counts_only), allocation, rng=rng)
    specs = [t.budget.spec for t in preview.tables]
    values = []
    for table in load.tables:
        spec = specs[_matching(plan, load.level, specs, table)]
        released = preview.tables[specs.index(spec)].released_counts
        values.append(np.maximum(np.rint(_per_area(plan, load.level, spec.by, released)), 0))
    epsilon = preview.allocation.total.epsilon
    label = "DP preview draw (numpy noise, uncharged, never published)"
    return AreaTables(label, tuple(values)), epsilon


def release_area_tables(
    plan: Plan, level: str, release_dir: str | Path
) -> tuple[Workload, AreaTables, tuple[str, ...]]:
    """A real release's tables that are published per `level`, as the attacker reads them
    from `tables/*.csv`; and the names of the tables it could not use."""
    folder = Path(release_dir) / "tables"
    if not folder.is_dir():
        raise DataError(f"'{release_dir}' is not a release folder (no tables/ inside).")
    specs, arrays, skipped = [], {}, []
    up, finer = geography_chain(plan, level)
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        header = rows[0] if rows else []
        by = [h for h in header if h in plan.schema]
        if level not in by or "count" not in header or finer & set(by):
            skipped.append(path.stem)
            continue
        shape = [plan.schema[c].size for c in by]
        values = np.zeros(shape)
        where = [header.index(c) for c in by]
        lookup = [{lab.lstrip("'"): i for i, lab in enumerate(plan.schema[c].labels)} for c in by]
        try:
            for row in rows[1:]:
                cell = tuple(lookup[j][row[w].lstrip("'")] for j, w in enumerate(where))
                values[cell] = float(row[header.index("count")])
        except (KeyError, ValueError, IndexError):
            skipped.append(path.stem)
            continue
        arrays[path.stem] = _per_area(plan, level, by, values)
        names = [c for c in by if c == level or c not in up]
        specs.append(TableSpec(path.stem, tuple(names)))
    if not specs:
        raise DataError(
            f"The release in '{release_dir}' has no table by '{level}' that matches the plan; "
            "an attack needs tables published per area."
        )
    load = workload(plan, level, specs)
    values_per_table = []
    for table in load.tables:
        array = arrays[specs[_matching(plan, level, specs, table)].name]
        values_per_table.append(np.maximum(np.rint(array), 0))
    return (
        load,
        AreaTables(f"DP release '{Path(release_dir).name}'", tuple(values_per_table)),
        (tuple(skipped)),
    )
