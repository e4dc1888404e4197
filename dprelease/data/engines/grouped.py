"""Counting with one GROUPING SETS query (DuckDB, Spark SQL), then encoding the groups.

The engine groups the raw values of the plan's columns once for all tables: one grouping set
per distinct table (its `by` columns), nothing more (each set adds up to every row, so the
rows read and each column's report come from a set that holds the column). What leaves the
engine is one row per distinct combination of values with its count, never a record. Those
rows are encoded here by the same code as the in-memory path (`dprelease.data.encode_columns`),
each weighted by its count, so every engine gives the same counts and report as `load_data` +
`count`.

`unit: id`: the query first ranks the rows of each id in random order,
`row_number() OVER (PARTITION BY id ORDER BY random())`, and counts a row only if its rank is
at most `max_rows`: the engine groups all rows of an id together, however they are spread
over files and batches, so the cap is exact and the kept rows are a uniform random choice.
`_all` counts every row read, so `rows read − kept` are the rows the cap dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from dprelease.accounting.counted import counted_tables
from dprelease.data.count import EXACT_FLOAT_LIMIT, encode_columns
from dprelease.data.engines.result import CountResult, frozen_counts
from dprelease.data.report import DataReport, WeightReport
from dprelease.errors import DataError
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import TableSpec


def grouping_sets(plan: Plan) -> list[tuple[str, ...]]:
    """The distinct column sets of the tables (at least one: () when no table has columns).

    Nothing else is grouped: each set's counts add up to all rows, and a column's report
    comes from any set that holds it, so the query groups no more than the tables need.
    """
    sets: dict[frozenset[str], tuple[str, ...]] = {}
    for spec in counted_tables(plan):
        if spec.by:
            sets.setdefault(frozenset(spec.by), tuple(spec.by))
    return list(sets.values()) or [()]


def positional(columns: Sequence[str]) -> list[str]:
    """The names the query gives the source's columns: c0, c1, … by position.

    The data's own names never reach SQL: a data column called `_kept` or `_g0` cannot clash
    with the query's names, and `SEX` and `sex` stay two columns in a case-blind engine.
    """
    return [f"c{i}" for i in range(len(columns))]


def _weight_value(column: str) -> str:
    """A survey weight as a double, NULL when it is no number."""
    # through text: DuckDB 2.0 folds isnan() of a Parquet double to false from the file's
    # statistics, which leave NaN out (a NaN weight was then clamped to W, not 0)
    return f"TRY_CAST(CAST({column} AS STRING) AS DOUBLE)"


def weight_sum(column: str, lo: int, hi: int, rounding: str) -> str:
    """Σ of a survey weight as `count.weight_units` makes it: clamped into [lo, hi], rounded
    half to even (`rounding`: the engine's function), 0 when missing or not a number."""
    value = _weight_value(column)
    clamped = f"{rounding}(least(greatest({value}, {int(lo)}), {int(hi)}), 0)"
    return f"sum(CASE WHEN {value} IS NULL OR isnan({value}) THEN 0 ELSE {clamped} END)"


def weight_counts(column: str, lo: int, hi: int) -> tuple[str, str, str]:
    """The rows whose weight is no number, below `lo`, above `hi` (`report.weight_report`)."""
    value = _weight_value(column)

    def rows(condition: str) -> str:
        return f"sum(CASE WHEN {condition} THEN 1 ELSE 0 END)"

    missing = rows(f"{value} IS NULL OR isnan({value})")
    return missing, rows(f"{value} < {int(lo)}"), rows(f"{value} > {int(hi)}")


def grouping_query(
    plan: Plan,
    relation: str,
    columns: Sequence[str],
    random: str,
    rounding: str = "round_even",
) -> str:
    """The one query over `relation`, the engine's read of the source with its `columns`
    renamed by position (`positional`). Plan column i comes out as `v<i>`; survey weight k
    (`plan.survey_weights`) as its sum `_w<k>` (issue 37.8)."""
    used = list(plan.used_columns)
    weights = plan.survey_weights
    read = [*used, plan.unit.column or "", *(w.column for w in weights)]
    sql = {name: f"c{columns.index(name)}" for name in read if name}
    keep = ""
    if plan.unit.kind == "id" and plan.unit.column:
        needed = ", ".join(sql[n] for n in dict.fromkeys(n for n in read if n))
        ranked = (
            f"row_number() OVER (PARTITION BY {sql[plan.unit.column]} ORDER BY _random) "
            f"<= {int(plan.unit.max_rows)}"
        )
        shuffled = f"(SELECT {needed}, {random} AS _random FROM {relation}) AS shuffled"
        relation = f"(SELECT {needed}, {ranked} AS _keep FROM {shuffled}) AS ranked"
        counts = "count(*) FILTER (WHERE _keep) AS _kept, count(*) AS _all"
        keep = " FILTER (WHERE _keep)"
    else:
        counts = "count(*) AS _kept"
    for k, w in enumerate(weights):
        counts += f", {weight_sum(sql[w.column], w.lo, w.hi, rounding)}{keep} AS _w{k}"
        for suffix, total in zip("mlh", weight_counts(sql[w.column], w.lo, w.hi), strict=True):
            counts += f", {total}{keep} AS _w{suffix}{k}"
    if not used:
        return f"SELECT {counts} FROM {relation}"
    sets = ", ".join("(" + ", ".join(sql[n] for n in s) + ")" for s in grouping_sets(plan))
    values = ", ".join(f"{sql[n]} AS v{i}" for i, n in enumerate(used))
    flags = ", ".join(f"grouping({sql[n]}) AS _g{i}" for i, n in enumerate(used))
    return f"SELECT {values}, {flags}, {counts} FROM {relation} GROUP BY GROUPING SETS ({sets})"


def counts_from_groups(
    plan: Plan, groups: pa.Table, where: str, engine: str, max_rows: int | None
) -> CountResult:
    """True counts and data report from the grouped rows (v<i>, _g<i>, _kept[, _all]).

    `_g<i>` is 1 where column i is not grouped (SQL's grouping()): together they name the set.
    `_all` (rows before the unit cap) is there only for `unit: id`.
    """
    used = list(plan.used_columns)
    mask_of = {name: 1 << (len(used) - 1 - i) for i, name in enumerate(used)}
    full = (1 << len(used)) - 1
    marks = np.zeros(groups.num_rows, dtype=np.int64)
    for i in range(len(used)):
        flag = np.asarray(groups.column(f"_g{i}").to_pylist(), dtype=np.int64)
        marks |= flag << (len(used) - 1 - i)
    every = "_all" if "_all" in groups.column_names else "_kept"

    def rows_of(columns: Sequence[str]) -> tuple[pa.Table, np.ndarray]:
        g = full & ~sum(mask_of[n] for n in columns)
        selected = groups.filter(pa.array(marks == g)) if used else groups
        kept = np.asarray(selected.column("_kept").to_pylist(), dtype=np.float64)
        return selected, kept

    def weighted(selected: pa.Table, spec: TableSpec, kept: np.ndarray) -> np.ndarray:
        """The groups' counts, or their sums of the table's survey weight (issue 37.8)."""
        if spec.survey_weight is None:
            return kept
        column = selected.column(f"_w{plan.survey_weights.index(spec.survey_weight)}")
        return np.nan_to_num(np.asarray(column.to_pylist(), dtype=np.float64))

    sets = grouping_sets(plan)
    first, kept_first = rows_of(sets[0])
    rows_read = int(sum(first.column(every).to_pylist()))
    rows_kept = int(kept_first.sum())
    if rows_read == 0:
        raise DataError(f"{where} has column names but no rows of data; give at least one row.")
    if max_rows is not None and rows_read > max_rows:
        raise DataError(
            f"{where} has more than {max_rows:,} rows ({rows_read:,} read), the row limit; "
            "raise it with --max-rows if the data are really that large."
        )
    for weight in plan.survey_weights:  # the engine sums weights as doubles (issue 37.8)
        if weight.hi * max(rows_kept, 1) >= EXACT_FLOAT_LIMIT:
            raise DataError(
                f"The weighted totals of column '{weight.column}' could exceed 2^53; lower the "
                "survey_weight bound W or count fewer rows."
            )
    reports = []
    for name in used:
        selected, kept = rows_of(next(s for s in sets if name in s))
        _, (column_report,) = encode_columns(
            _as_read(selected, plan, [name]), plan.schema, [name], weights=kept
        )
        reports.append(column_report)
    counts: dict[str, np.ndarray] = {}
    for spec in counted_tables(plan):
        if not spec.by:
            total = np.rint(weighted(first, spec, kept_first).sum())
            counts[spec.name] = np.array([total], dtype=np.int64)
            continue
        selected, kept = rows_of(spec.by)
        codes, _ = encode_columns(
            _as_read(selected, plan, spec.by), plan.schema, spec.by, weights=kept
        )
        sums = weighted(selected, spec, kept)
        counts[spec.name] = _cells(codes, spec.by, spec.shape(plan.schema), sums)
    report = DataReport(
        rows_read, rows_read - rows_kept, tuple(reports), weights=_weight_reports(plan, first)
    )
    return CountResult(frozen_counts(counts, rows_read), report, engine)


def _weight_reports(plan: Plan, groups: pa.Table) -> tuple[WeightReport, ...]:
    """Each survey weight's missing and clamped rows, summed over one grouping set's groups."""

    def total(name: str) -> int:
        return int(np.nansum(np.asarray(groups.column(name).to_pylist(), dtype=np.float64)))

    return tuple(
        WeightReport(
            w.column,
            w.lo,
            w.hi,
            rows=total("_kept"),
            rows_missing=total(f"_wm{k}"),
            rows_below=total(f"_wl{k}"),
            rows_above=total(f"_wh{k}"),
        )
        for k, w in enumerate(plan.survey_weights)
    )


def _as_read(selected: pa.Table, plan: Plan, columns: Sequence[str]) -> pa.Table:
    """The grouped values of `columns` under their plan names (text stays text)."""
    used = list(plan.used_columns)
    return pa.table([selected.column(f"v{used.index(n)}") for n in columns], names=list(columns))


def _cells(
    codes: dict[str, np.ndarray], by: Sequence[str], shape: tuple[int, ...], kept: np.ndarray
) -> np.ndarray:
    """Σ weights per flat cell index; groups with a left-out code (-1) count nowhere."""
    flat = np.zeros(len(kept), dtype=np.int64)
    left_out = np.zeros(len(kept), dtype=bool)
    for name, size in zip(by, shape, strict=True):
        column = codes[name].astype(np.int64)
        left_out |= column < 0
        flat = flat * size + column
    cells = math.prod(shape)
    summed = np.bincount(flat[~left_out], weights=kept[~left_out], minlength=cells)
    return np.rint(summed).astype(np.int64)
