"""Parquet: a file, or a folder of part files as Spark and Hive write tables. Rows come from the
footers before anything is decoded; Parquet keeps its types, so text columns are cast to text
and numeric ones to float64. (The engines stream it themselves: DuckDB's `read_parquet`,
Arrow's `ParquetFile.iter_batches`, Spark's reader.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from dprelease.data.columns import as_text, float_column, float_values, select_columns
from dprelease.data.formats import part_file
from dprelease.data.formats.base import Described, ReadRequest
from dprelease.errors import DataError

if TYPE_CHECKING:
    from dprelease.data.size_limits import SizeLimits

IGNORED_PREFIXES = (".", "_")  # _SUCCESS, .crc: not parts of a folder data set


def read_table(request: ReadRequest) -> pa.Table:
    """Parquet keeps its types: text columns are cast to text, numeric ones to float64."""
    import pyarrow.parquet as pq

    source, where, numeric = request.source, request.where, request.numeric
    try:
        handle = pq.ParquetFile(
            pa.BufferReader(source) if isinstance(source, bytes) else str(source)
        )
        wanted = select_columns(handle.schema_arrow.names, request.columns, numeric)
        request.limits.check_parquet(where, handle.metadata, max(1, len(wanted)))
        table = handle.read(columns=wanted)
    except (pa.ArrowException, OSError):
        raise DataError(f"{where} is not a readable Parquet file.") from None
    for index, name in enumerate(wanted):
        column = table.column(index)
        if name in numeric:
            values = float_column(float_values(column, name))
        elif pa.types.is_dictionary(column.type) and pa.types.is_string(column.type.value_type):
            values = column
        else:
            values = as_text(column.combine_chunks(), name).dictionary_encode()
        table = table.set_column(index, name, values)
    return table


def describe(path: Path, head: bytes, where: str, limits: SizeLimits) -> Described:
    return describe_parts(path, where, limits)


def describe_parts(path: Path, where: str, limits: SizeLimits) -> Described:
    """Columns and rows of a file or a folder of parts, from the footers only."""
    import pyarrow.parquet as pq

    files = part_files(path)
    if not files:
        raise DataError(
            f"{where} is a folder with no Parquet files; give a data file or a folder of "
            "Parquet parts (as Spark and Hive write them)."
        )
    try:
        footers = [pq.ParquetFile(f) for f in files]  # footers only: nothing is decoded
        rows = sum(f.metadata.num_rows for f in footers)
        names = tuple(footers[0].schema_arrow.names)
    except (pa.ArrowException, OSError):
        raise DataError(
            f"{where} is not readable as Parquet (a file, or a folder of parts)."
        ) from None
    limits.check(where, rows=rows)
    return Described(names, rows=rows, files=files)


def part_files(path: Path) -> tuple[str, ...]:
    """The path itself, or the Parquet files under a folder, hidden and _ files left out."""
    if not path.is_dir():
        return (str(path),)
    return tuple(
        str(file)
        for file in sorted(path.rglob("*"))
        if file.is_file()
        and part_file(file)
        and not any(part.startswith(IGNORED_PREFIXES) for part in file.relative_to(path).parts)
    )
