"""A data source as the engines see it: a CSV or Parquet file, or a folder of Parquet parts.

`describe` opens the source once to learn its format and column names (for CSV also the
encodings to try and the delimiter, sniffed as `read_data` does; for Parquet the rows, from
the footers). It reads no records. A folder is read as Spark and Hive write tables: every
Parquet file under it, hidden and `_`-prefixed files (`_SUCCESS`, `.crc`) left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dprelease.data.columns import MissingColumnsError, missing_columns_message, select_columns
from dprelease.data.csv_file import csv_layout
from dprelease.data.read import SizeLimits, _check_size, _detect_format, _open
from dprelease.errors import DataError
from dprelease.plan.model import Plan

IGNORED_PREFIXES = [".", "_"]


@dataclass(frozen=True)
class DataSource:
    """What an engine needs to read a source: never a record value."""

    location: str  # a local path, or a URI only Spark reads (hdfs://, s3a://)
    fmt: Literal["csv", "parquet", "excel"]
    where: str  # how messages call it
    columns: tuple[str, ...]
    files: tuple[str, ...] = ()  # Parquet: the part files, in order
    encodings: tuple[str, ...] = ()  # CSV: the encodings to try, in order
    delimiter: str = ","
    rows: int | None = None  # Parquet: from the footers, before anything is decoded

    @property
    def remote(self) -> bool:
        return "://" in self.location


def describe(location: str | Path, limits: SizeLimits) -> DataSource:
    """The format, columns and layout of a local file or folder (reads no records)."""
    path = Path(location)
    if path.is_dir():
        return _parquet(path, f"The data path '{path}'", limits)
    _check_size(path, None, limits.max_bytes)
    head, name, where = _open(path, None)
    fmt = _detect_format(head, name, where)
    if fmt == "parquet":
        return _parquet(path, where, limits)
    if fmt == "excel":
        return DataSource(str(path), "excel", where, ())
    encodings, delimiter, header = csv_layout(head, where)
    return DataSource(
        str(path), "csv", where, tuple(header), encodings=encodings, delimiter=delimiter
    )


def remote(uri: str) -> DataSource:
    """A URI that only Spark reads: Parquet (a file or a folder) or comma/TAB separated text."""
    suffix = Path(uri.rstrip("/")).suffix.lower()
    if suffix in (".csv", ".tsv", ".txt"):
        delimiter = "\t" if suffix == ".tsv" else ","
        return DataSource(
            uri, "csv", f"The data '{uri}'", (), encodings=("utf-8",), delimiter=delimiter
        )
    return DataSource(uri, "parquet", f"The data '{uri}'", ())


def _parquet(path: Path, where: str, limits: SizeLimits) -> DataSource:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = _parquet_files(path)
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
    return DataSource(str(path), "parquet", where, names, files=files, rows=rows)


def check_columns(source: DataSource, plan: Plan) -> list[str]:
    """The columns counting reads (the plan's and the unit id), as `load_data` checks them."""
    from dprelease.data.count import PLAN_USES, _needed

    try:
        return select_columns(source.columns, _needed(plan), ())
    except MissingColumnsError as error:
        raise DataError(
            missing_columns_message(error.missing, error.available, PLAN_USES, error.found)
        ) from None


def _parquet_files(path: Path) -> tuple[str, ...]:
    """The path itself, or the .parquet/.pq files under a folder, hidden and _ files left out."""
    if not path.is_dir():
        return (str(path),)
    return tuple(
        str(file)
        for file in sorted(path.rglob("*"))
        if file.is_file()
        and file.suffix.lower() in (".parquet", ".pq")
        and not any(
            part.startswith(tuple(IGNORED_PREFIXES)) for part in file.relative_to(path).parts
        )
    )
