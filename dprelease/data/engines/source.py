"""A data source as the engines see it: a file of any registered format (`data.formats`), or a
folder of Parquet parts.

`describe` opens the source once to learn its format (the registry's reader) and column names
(for CSV also the encodings to try and the delimiter, sniffed as `read_data` does; for Parquet
the rows, from the footers; for Stata, SPSS and SAS the rows, from the header). It reads no
records. A folder is read as Spark and Hive write tables: every Parquet file under it, hidden
and `_`-prefixed files (`_SUCCESS`, `.crc`) left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dprelease.data import formats
from dprelease.data.columns import MissingColumnsError, missing_columns_message, select_columns
from dprelease.data.read import SizeLimits, _check_size, _open, detect_reader
from dprelease.errors import DataError
from dprelease.plan.model import Plan


@dataclass(frozen=True)
class DataSource:
    """What an engine needs to read a source: never a record value."""

    location: str  # a local path, or a URI only Spark reads (hdfs://, s3a://)
    fmt: str  # the registry's reader name (`formats.reader(fmt)`)
    where: str  # how messages call it
    columns: tuple[str, ...]
    files: tuple[str, ...] = ()  # Parquet: the part files, in order
    encodings: tuple[str, ...] = ()  # CSV: the encodings to try, in order
    delimiter: str = ","
    rows: int | None = None  # Parquet, Stata, SPSS, SAS: from metadata, before any decoding

    @property
    def remote(self) -> bool:
        return "://" in self.location


def describe(location: str | Path, limits: SizeLimits) -> DataSource:
    """The format, columns and layout of a local file or folder (reads no records)."""
    from dprelease.data.formats.parquet import describe_parts

    path = Path(location)
    if path.is_dir():
        where = f"The data path '{path}'"
        parts = describe_parts(path, where, limits)
        return DataSource(str(path), "parquet", where, parts.columns, parts.files, rows=parts.rows)
    _check_size(path, None, limits.max_bytes)
    head, name, where = _open(path, None)
    reader = detect_reader(head, name, where)
    found = reader.implementation().describe(path, head, where, limits)
    return DataSource(
        str(path),
        reader.name,
        where,
        found.columns,
        files=found.files,
        encodings=found.encodings,
        delimiter=found.delimiter,
        rows=found.rows,
    )


def remote(uri: str) -> DataSource:
    """A URI that only Spark reads: Parquet (a file or a folder) or comma/TAB separated text."""
    from dprelease.data.formats.text import remote_delimiter

    if formats.remote_text(uri):
        return DataSource(
            uri,
            "csv",
            f"The data '{uri}'",
            (),
            encodings=("utf-8",),
            delimiter=remote_delimiter(uri),
        )
    return DataSource(uri, "parquet", f"The data '{uri}'", ())


def check_columns(source: DataSource, plan: Plan) -> list[str]:
    """The columns counting reads (the plan's and the unit id), as `load_data` checks them."""
    from dprelease.data.count import PLAN_USES, _needed

    try:
        return select_columns(source.columns, _needed(plan), ())
    except MissingColumnsError as error:
        raise DataError(
            missing_columns_message(error.missing, error.available, PLAN_USES, error.found)
        ) from None
