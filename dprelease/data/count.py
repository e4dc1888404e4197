"""Confidential data: encode it onto the plan's public domains and count the true tables.

`load_data` = `read_data` (only the columns the plan needs) + `encode`. Encoding turns each
column into domain codes 0..size-1 (-1: the row is left out of every table using the column),
caps the rows per privacy unit, and reports to the data holder what was mapped to `other`,
left out, clamped or dropped. `count` turns codes into `TrueCounts`, one vectorised bincount
per table. Everything here is CONFIDENTIAL: codes, reports and counts are never exported;
only noisy counts leave the library (see `release`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pyarrow as pa

from dprelease.accounting.counted import counted_tables
from dprelease.data.columns import (
    MissingColumnsError,
    dictionary_parts,
    float_values,
    missing_columns_message,
)
from dprelease.data.read import read_data
from dprelease.data.report import ColumnReport, DataReport, weight_report
from dprelease.errors import DataError, InternalError
from dprelease.plan.model import Plan
from dprelease.plan.schema import MISSING_CODE, CategoricalColumn, NumericColumn, Schema
from dprelease.plan.survey_weight import SurveyWeight
from dprelease.plan.table_spec import Unit

__all__ = [
    "ColumnReport",
    "DataReport",
    "EncodedData",
    "TrueCounts",
    "count",
    "encode",
    "load_data",
    "read_data",
]

PLAN_USES = " that the plan uses"
EXACT_FLOAT_LIMIT = 2**53  # weighted totals are summed in float64: exact below it


@dataclass(frozen=True, repr=False)
class EncodedData:
    """CONFIDENTIAL: the domain codes of the kept rows, per column, and the data report.

    Codes are compact signed ints (int8/int16/int32), -1 for a row left out of the column's
    tables. All arrays have `report.rows_kept` rows.
    """

    codes: Mapping[str, np.ndarray]
    report: DataReport
    # issue 37.8: per survey weight, each kept row's weight in whole units (int64)
    weights: Mapping[SurveyWeight, np.ndarray] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def rows(self) -> int:
        return self.report.rows_kept

    def __repr__(self) -> str:
        return f"EncodedData(<confidential codes of columns {', '.join(self.codes)}>)"


@dataclass(frozen=True, repr=False)
class TrueCounts:
    """CONFIDENTIAL: the exact counts of every table, before any noise. Never export these.

    `counts[name]` is an int64 array of the table's cells in domain order (last `by` column
    fastest, i.e. C order); a table with `by: []` has one cell, the number of rows kept.
    `rows_read` is how many records the counting read (before the unit cap): a charged
    release checks that the ledger's fingerprint saw at least as many (None: no data read).
    """

    counts: Mapping[str, np.ndarray]
    rows_read: int | None = None

    def __repr__(self) -> str:
        return f"TrueCounts(<confidential counts of tables {', '.join(self.counts)}>)"


def load_data(
    source: str | Path | bytes,
    plan: Plan,
    *,
    filename: str | None = None,
    rng: np.random.Generator | None = None,
    max_bytes: int | None = None,
) -> EncodedData:
    """Read only the columns the plan needs (numeric ones as numbers) and encode them.

    A file larger than `max_bytes` is refused before it is parsed.
    """
    numeric = [n for n in plan.used_columns if isinstance(plan.schema[n], NumericColumn)]
    numeric += [w.column for w in plan.survey_weights if w.column not in numeric]
    try:
        table = read_data(
            source, filename=filename, columns=_needed(plan), numeric=numeric, max_bytes=max_bytes
        )
    except MissingColumnsError as error:
        raise DataError(
            missing_columns_message(error.missing, error.available, PLAN_USES, error.found)
        ) from None
    return encode(table, plan, rng=rng)


def encode(table: pa.Table, plan: Plan, *, rng: np.random.Generator | None = None) -> EncodedData:
    """Map every column the plan's tables use onto its public domain, after the unit cap.

    `rng` picks which rows of a unit over `max_rows` are kept; by default a fresh generator
    seeded from OS entropy, so the choice cannot be reproduced from the release.
    """
    missing = [n for n in _needed(plan) if n not in table.column_names]
    if missing:
        found = len(_needed(plan)) - len(missing)
        raise DataError(missing_columns_message(missing, table.column_names, PLAN_USES, found))
    keep = _unit_cap(table, plan.unit, rng)
    codes, reports = encode_columns(table, plan.schema, plan.used_columns, keep=keep)
    dropped = 0 if keep is None else table.num_rows - int(np.count_nonzero(keep))
    weights, weight_reports = {}, []
    for w in plan.survey_weights:
        numbers = float_values(table.column(w.column), w.column)
        numbers = numbers if keep is None else numbers[keep]
        weights[w] = weight_units(numbers, w)
        weight_reports.append(weight_report(w.column, w.lo, w.hi, numbers))
    report = DataReport(table.num_rows, dropped, tuple(reports), weights=tuple(weight_reports))
    return EncodedData(MappingProxyType(codes), report, MappingProxyType(weights))


def weight_units(numbers: np.ndarray, weight: SurveyWeight) -> np.ndarray:
    """Each row's survey weight (float64, NaN where no number): clamped into [lo, W], rounded
    to a whole number (half to even); 0 where missing or not a number
    (`plan/survey_weight.py`). Read-only int64."""
    clamped = np.rint(np.clip(numbers, weight.lo, weight.hi))
    units: np.ndarray = np.where(np.isnan(clamped), 0, clamped).astype(np.int64)
    units.setflags(write=False)
    return units


def encode_columns(
    table: pa.Table,
    schema: Schema,
    names: Sequence[str],
    *,
    keep: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], list[ColumnReport]]:
    """Domain codes and reports of `names`, over the rows in `keep` (None: all).

    With `weights`, row i stands for weights[i] rows (the distinct values an engine grouped
    and counted): the reports add weights instead of counting rows.
    """
    codes: dict[str, np.ndarray] = {}
    reports: list[ColumnReport] = []
    for name in names:
        column = schema[name]
        if isinstance(column, CategoricalColumn):
            codes[name], report = _encode_categorical(table.column(name), column, keep, weights)
        else:
            codes[name], report = _encode_numeric(table.column(name), column, keep, weights)
        codes[name].setflags(write=False)
        reports.append(report)
    return codes, reports


def _needed(plan: Plan) -> list[str]:
    """The columns encoding reads: those the tables use, the unit id column, the weights."""
    id_column = [plan.unit.column] if plan.unit.kind == "id" and plan.unit.column else []
    needed = [*plan.used_columns, *id_column]
    return needed + [w.column for w in plan.survey_weights if w.column not in needed]


def _code_dtype(size: int) -> type[np.signedinteger]:
    """The smallest signed int that holds codes 0..size-1 and -1 (less memory traffic)."""
    for dtype in (np.int8, np.int16, np.int32):
        if size <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _encode_categorical(
    values: pa.ChunkedArray,
    column: CategoricalColumn,
    keep: np.ndarray | None,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, ColumnReport]:
    """Codes via the column's own text matching, applied once per distinct text."""
    texts, indices = dictionary_parts(values, column.name)
    if keep is not None:
        indices = indices[keep]
    other = column.other_code
    # One lookup slot per distinct text, and a last one for missing (null) values.
    lookup = np.append(column.codes_for_texts(texts), other).astype(_code_dtype(column.size))
    rows_per_slot = _bincount(indices, weights, len(lookup))
    to_other = np.zeros(len(lookup), dtype=bool)
    if other != MISSING_CODE:
        # Which texts that got the other code are outside the domain, not the other label itself?
        candidates = np.flatnonzero(lookup[:-1] == other)
        exact = dataclasses.replace(column, other=None).codes_for_texts(
            [texts[i] for i in candidates]
        )
        to_other[candidates[exact == MISSING_CODE]] = True
        to_other[-1] = True
    report = ColumnReport(
        name=column.name,
        kind="categorical",
        rows=int(rows_per_slot.sum()),
        rows_to_other=int(rows_per_slot[to_other].sum()),
        rows_left_out=int(rows_per_slot[lookup == MISSING_CODE].sum()),
    )
    return lookup[indices], report


def _encode_numeric(
    values: pa.ChunkedArray,
    column: NumericColumn,
    keep: np.ndarray | None,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, ColumnReport]:
    """Bin codes via the column's own bins; NaN (missing, not a number) is left out."""
    numbers = float_values(values, column.name)
    if keep is not None:
        numbers = numbers[keep]
    codes, clamped = column.codes_for_values(numbers)
    # slot 0: in a bin, 1: clamped, 2: left out (NaN)
    slots = np.where(codes == MISSING_CODE, 2, clamped.astype(np.int8))
    rows_per_slot = _bincount(slots, weights, 3)
    report = ColumnReport(
        name=column.name,
        kind="numeric",
        rows=int(rows_per_slot.sum()),
        rows_left_out=int(rows_per_slot[2]),
        rows_clamped=int(rows_per_slot[1]),
    )
    return codes.astype(_code_dtype(column.size)), report


def _bincount(slots: np.ndarray, weights: np.ndarray | None, size: int) -> np.ndarray:
    """Rows per slot: a plain count, or the sum of the rows' weights (exact below 2^53)."""
    if weights is None:
        return np.bincount(slots, minlength=size)
    return np.rint(np.bincount(slots, weights=weights, minlength=size)).astype(np.int64)


def _unit_cap(table: pa.Table, unit: Unit, rng: np.random.Generator | None) -> np.ndarray | None:
    """Rows to keep so that no unit id has more than `max_rows` rows (None: keep all).

    Within an id the kept rows are chosen uniformly at random: one sort by the key
    (id << 32 | 32 random bits) groups rows by id in random order (a single int64 argsort
    measured ~10× faster than a lexsort), then rows ranked below `max_rows` in their id are
    kept. Rows with a missing id count as one unit.
    """
    if unit.kind != "id" or unit.column is None:
        return None
    _, ids = dictionary_parts(table.column(unit.column), unit.column)
    rows_per_id = np.bincount(ids)
    if len(ids) == 0 or rows_per_id.max() <= unit.max_rows:
        return None
    generator = rng if rng is not None else np.random.default_rng()
    shuffle = generator.integers(0, 2**32, size=len(ids), dtype=np.uint64)
    order = np.argsort((ids.astype(np.uint64) << np.uint64(32)) | shuffle)
    first_of_id = np.cumsum(rows_per_id) - rows_per_id
    rank = np.arange(len(ids)) - first_of_id[ids[order]]
    keep = np.zeros(len(ids), dtype=bool)
    keep[order[rank < unit.max_rows]] = True
    return keep


def count(encoded: EncodedData, plan: Plan) -> TrueCounts:
    """The true counts of every table of the plan, in domain order (C order).

    Per table: flat cell index = Σ code_j × stride_j, then one `np.bincount`. Rows with code
    -1 in any of the table's columns go to a sentinel bin past the last cell, which is
    dropped; masks of such rows are computed once per column, only for columns that have them.
    """
    rows = encoded.rows
    left_out = _left_out_masks(encoded, plan, rows)
    counter = _CellCounter(rows)
    counts: dict[str, np.ndarray] = {}
    for spec in counted_tables(plan):
        weights = None if spec.survey_weight is None else _weights(encoded, spec.survey_weight)
        if not spec.by:
            total = rows if weights is None else int(weights.sum())
            table_counts = np.array([total], dtype=np.int64)
        else:
            columns = [encoded.codes[name] for name in spec.by]
            masks = [mask for name in spec.by if (mask := left_out[name]) is not None]
            table_counts = counter.count(columns, spec.shape(plan.schema), masks, weights)
        table_counts.setflags(write=False)
        counts[spec.name] = table_counts
    return TrueCounts(MappingProxyType(counts), encoded.report.rows_read)


def _weights(encoded: EncodedData, weight: SurveyWeight) -> np.ndarray:
    """A weight's units per kept row; their sums must stay exact in float64 (bincount)."""
    units = encoded.weights.get(weight)
    if units is None or units.shape != (encoded.rows,):
        raise InternalError(f"The encoded data have no weights of '{weight.column}'.")
    if weight.hi * max(encoded.rows, 1) >= EXACT_FLOAT_LIMIT:
        raise DataError(
            f"The weighted totals of column '{weight.column}' could exceed 2^53; lower the "
            "survey_weight bound W or count fewer rows."
        )
    return units


def _left_out_masks(encoded: EncodedData, plan: Plan, rows: int) -> dict[str, np.ndarray | None]:
    """Per used column: a mask of rows with code -1, or None when it has none."""
    masks: dict[str, np.ndarray | None] = {}
    for name in plan.used_columns:
        codes = encoded.codes.get(name)
        if codes is None or codes.shape != (rows,):
            raise InternalError(f"The encoded data has no codes for '{name}' of {rows} rows.")
        mask = codes < 0
        masks[name] = mask if mask.any() else None
    return masks


class _CellCounter:
    """Reusable int32/int64 buffers for the flat cell index, so tables allocate nothing."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.buffers: dict[type[np.signedinteger], tuple[np.ndarray, np.ndarray]] = {}

    def _buffers(self, dtype: type[np.signedinteger]) -> tuple[np.ndarray, np.ndarray]:
        if dtype not in self.buffers:
            self.buffers[dtype] = (np.empty(self.rows, dtype), np.empty(self.rows, dtype))
        return self.buffers[dtype]

    def count(
        self,
        columns: Sequence[np.ndarray],
        shape: tuple[int, ...],
        masks: list[np.ndarray],
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        cells = math.prod(shape)
        if len(columns) == 1 and not masks:
            flat = columns[0]  # the codes are the cell index already
        else:
            # int32 halves the memory traffic when the cells (and the sentinel) fit in it.
            dtype = np.int32 if cells < np.iinfo(np.int32).max else np.int64
            flat, product = self._buffers(dtype)
            strides = [math.prod(shape[j + 1 :]) for j in range(len(shape))]
            np.multiply(columns[0], strides[0], out=flat, dtype=dtype)
            for codes, stride in zip(columns[1:], strides[1:], strict=True):
                if stride == 1:
                    np.add(flat, codes, out=flat, dtype=dtype)
                else:
                    np.multiply(codes, stride, out=product, dtype=dtype)
                    np.add(flat, product, out=flat)
            if masks:
                left_out = masks[0]
                for mask in masks[1:]:
                    left_out = left_out | mask
                np.copyto(flat, cells, where=left_out)  # the sentinel bin
        binned = np.bincount(flat, weights=weights, minlength=cells + (1 if masks else 0))
        if len(binned) != cells + (1 if masks else 0):
            raise InternalError("A code lies outside its column's domain.")
        if weights is not None:  # weighted totals: exact integers below 2^53 (`_weights`)
            binned = np.rint(binned)
        return binned[:cells].astype(np.int64, copy=False)
