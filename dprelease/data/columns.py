"""The columns of a read table: which to read (unknown or duplicate names are errors), and their
values as numpy arrays without pandas (dictionary codes, floats from text).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from dprelease.errors import DataError, quote
from dprelease.limits import MAX_RECORD_COLUMNS
from dprelease.plan.model import did_you_mean

TEXT = pa.dictionary(pa.int32(), pa.string())  # measured: faster than string + encode later


class MissingColumnsError(DataError):
    """Asked-for columns that the file does not have (the caller may reword the message)."""

    def __init__(self, missing: Sequence[str], available: Sequence[str], found: int) -> None:
        self.missing = tuple(missing)
        self.available = tuple(available)
        self.found = found  # how many of the asked-for columns the file does have
        super().__init__(missing_columns_message(self.missing, self.available, found=found))


def missing_columns_message(
    missing: Sequence[str], available: Sequence[str], purpose: str = "", found: int = 1
) -> str:
    """'The data has no column 'x'<purpose> (the file has N columns ...). Did you mean ...?'

    The file's own column names are never quoted: in a file without a header line they are
    the first record's values. Only a name equal to the missing one up to case is named (it
    reveals nothing the plan does not say); a merely similar one is only said to exist.
    """
    names = ", ".join(quote(m) for m in missing)
    head = f"The data has no {'column' if len(missing) == 1 else 'columns'} {names}{purpose}"
    hints = ""
    close = ""
    for name in missing:
        same_case = [a for a in available if a.lower() == name.lower()]
        if same_case:
            hints += f" Did you mean {quote(same_case[0])}?"
        elif not close and did_you_mean(name, list(available)):
            close = f" A column name in the file is close to {quote(name)}: check the spelling."
    if found == 0 and not hints:
        return (
            f"{head}, and none of its {len(available)} column names matches the plan; the first "
            "line of the file must be the column names." + close
        )
    return f"{head} (the file has {len(available)} columns; names must match exactly)." + (
        hints or close
    )


def select_columns(
    available: Sequence[str], columns: Sequence[str] | None, numeric: Collection[str]
) -> list[str]:
    """The columns to read, in the order asked; duplicate or unknown names are errors."""
    first_seen: dict[str, int] = {}
    for number, name in enumerate(available, start=1):
        if name in first_seen:  # by position: the names may be a record's values (no header)
            raise DataError(
                f"The data has duplicate column names (columns {first_seen[name]} and {number} "
                "have the same name); each name may appear once."
            )
        first_seen[name] = number
    if columns is None and len(available) > MAX_RECORD_COLUMNS:  # before pyarrow reads any
        raise DataError(
            f"The data has {len(available):,} columns; reading every column is limited to "
            f"{MAX_RECORD_COLUMNS:,}. Keep only the columns you need in the file."
        )
    wanted = list(dict.fromkeys([*(available if columns is None else columns), *numeric]))
    missing = [n for n in wanted if n not in available]
    if missing:
        raise MissingColumnsError(missing, available, found=len(wanted) - len(missing))
    return wanted


def _numpy(array: pa.Array, dtype: type[np.generic], missing: Any) -> np.ndarray:
    """A primitive arrow array as numpy (from its buffers: `to_numpy` would import pandas)."""
    if len(array) == 0:
        return np.empty(0, dtype)
    width = np.dtype(dtype).itemsize
    values = np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * width)
    if array.null_count == 0:
        return values
    bits = np.frombuffer(array.buffers()[0], np.uint8)
    valid = np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)]
    return np.where(valid.astype(bool), values, missing)


def dictionary_parts(column: pa.ChunkedArray, name: str) -> tuple[list[str], np.ndarray]:
    """The distinct texts of a column and each row's index into them (len(texts) = missing).

    Rows are then mapped with one numpy take over a per-text lookup, never row by row.
    """
    if pa.types.is_dictionary(column.type):
        encoded = column.combine_chunks()  # unifies the per-block dictionaries
        if not pa.types.is_string(encoded.dictionary.type):
            encoded = pa.DictionaryArray.from_arrays(
                encoded.indices, as_text(encoded.dictionary, name)
            )
    else:
        encoded = as_text(column.combine_chunks(), name).dictionary_encode()
    texts = encoded.dictionary.to_pylist()
    indices = _numpy(encoded.indices.cast(pa.int32()), np.int32, len(texts))
    return texts, indices


def as_text(array: pa.Array, name: str) -> pa.Array:
    try:
        return array.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise DataError(
            f"Column '{name}' has type {array.type}, which cannot be read as text."
        ) from None


def float_values(column: pa.ChunkedArray, name: str) -> np.ndarray:
    """A column as float64: numbers as they are, texts parsed, NaN where missing or not a number."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_dictionary(kind):
        texts, indices = dictionary_parts(column, name)
        lookup = np.array([*map(_parse_float, texts), math.nan], dtype=np.float64)
        return np.take(lookup, indices)
    try:
        as_float = column.cast(pa.float64()).combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise DataError(f"Column '{name}' has type {kind}, which is not numeric.") from None
    return _numpy(as_float, np.float64, np.nan)


def _parse_float(text: str) -> float:
    """The number a text spells, or NaN (counted as missing) when it is not one."""
    try:
        return float(text)
    except (TypeError, ValueError):  # TypeError: a null inside a dictionary
        return float("nan")


def float_column(values: np.ndarray) -> pa.Array:
    values = np.ascontiguousarray(values, np.float64)
    return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])


def text_to_numbers(table: pa.Table, numeric: Iterable[str]) -> pa.Table:
    """Replace text columns named in `numeric` by float64 columns."""
    for name in numeric:
        index = table.column_names.index(name)
        values = float_column(float_values(table.column(name), name))
        table = table.set_column(index, name, values)
    return table


NUMBER_SHARE = 0.9  # of a column's first rows that must read as numbers to offer it as such


def number_columns(table: pa.Table, rows: int = 1000) -> list[str]:
    """The columns whose first `rows` values are mostly numbers (at least NUMBER_SHARE): the
    dashboard's choices of a survey weight (issue 37.8). For the data holder only."""
    head = table.slice(0, rows)
    found = []
    for name in head.column_names:
        try:
            values = float_values(head.column(name), name)
        except DataError:  # a type that is no number at all
            continue
        if values.size and np.count_nonzero(~np.isnan(values)) >= NUMBER_SHARE * values.size:
            found.append(name)
    return found
