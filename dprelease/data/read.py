"""Reading data files (CSV, Parquet, Excel) into a column table, text exactly as written.

The one place that turns bytes into a `pyarrow.Table`. Every column is read as text ("01"
stays "01", "" and "NA" stay as written) unless it is named in `numeric`: those are float64,
null or NaN where a value is missing, NaN where it is not a number (encoding counts both as
missing). Errors are `DataError`s with one line that names columns and line numbers but
never a record value. Nothing on the CSV path imports pandas (pyarrow does so lazily in
`pa.array` and `to_numpy`, so those are avoided there): the CLI must start fast.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

import pyarrow as pa

from dprelease.data.columns import as_text, float_column, float_values, select_columns
from dprelease.data.csv_file import HEAD_BYTES, MAX_HEADER_BYTES, read_csv
from dprelease.data.excel import read_excel
from dprelease.data.size_limits import SizeLimits as SizeLimits  # re-exported: the readers' callers
from dprelease.errors import DataError
from dprelease.limits import MAX_DATA_MB, MAX_ROWS

Format = Literal["csv", "parquet", "excel"]
FORMATS: dict[str, Format] = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "excel",
}
ALLOWED = ".csv, .tsv, .txt, .parquet or .xlsx"


def read_data(
    source: str | Path | bytes,
    *,
    filename: str | None = None,
    columns: Sequence[str] | None = None,
    numeric: Collection[str] = (),
    max_bytes: int | None = MAX_DATA_MB * 1_000_000,
    max_rows: int | None = MAX_ROWS,
) -> pa.Table:
    """Read `columns` (default all, plus those in `numeric`) of a CSV, Parquet or Excel file.

    The format comes from the extension of `filename` (default: the path's name); bytes
    without a name are recognised by their signature. Text columns are dictionary-encoded
    strings; `numeric` columns are float64 (null or NaN where missing, NaN where not a number).
    A file larger than `max_bytes` on disk, or whose metadata announce more decoded bytes or
    more than `max_rows` rows (a decompression bomb), is refused before anything is decoded.
    """
    _check_size(source, filename, max_bytes)
    limits = SizeLimits(max_bytes, max_rows)
    head, name, where = _open(source, filename)
    fmt = _detect_format(head, name, where)
    try:
        if fmt == "csv":
            table = read_csv(source, head, where, columns, numeric)
        elif fmt == "parquet":
            table = _read_parquet(source, where, columns, numeric, limits)
        else:
            table = read_excel(source, where, columns, numeric, limits)
    except pa.ArrowException:  # a safety net: pyarrow's messages may quote record values
        raise DataError(f"{where} could not be read as {fmt}; check the file.") from None
    if table.num_rows == 0:
        raise DataError(f"{where} has column names but no rows of data; give at least one row.")
    limits.check(where, rows=table.num_rows)  # CSV: bytes on disk are the decoded size
    return table


# --- shared: column selection and conversion to numpy without pandas -------------------------


def _check_size(source: str | Path | bytes, filename: str | None, max_bytes: int | None) -> None:
    if max_bytes is None:
        return
    try:
        size = len(source) if isinstance(source, bytes) else Path(source).stat().st_size
    except OSError:
        return  # _open reports a file that cannot be opened
    if size > max_bytes:
        name = filename or ("" if isinstance(source, bytes) else Path(source).name)
        raise DataError(
            f"The data file '{name}' is {size / 1e6:,.1f} MB, more than the limit of "
            f"{max_bytes / 1e6:,.0f} MB; give a smaller file (only the columns the plan uses) "
            "or raise the size limit."
        )


def _head(read: Callable[[int], bytes]) -> bytes:
    """The first 64 KB; for text, extended to the end of the first line (a wide header)."""
    head = read(HEAD_BYTES)
    if head.startswith((b"PK\x03\x04", b"PAR1")):
        return head  # binary formats have no header line
    while len(head) >= HEAD_BYTES and b"\n" not in head and len(head) < MAX_HEADER_BYTES:
        more = read(HEAD_BYTES)
        if not more:
            break
        head += more
    return head


def _open(source: str | Path | bytes, filename: str | None) -> tuple[bytes, str, str]:
    """The first bytes, the name that decides the format, and how messages call the file."""
    if isinstance(source, bytes):
        name = filename or ""
        where = f"The data file '{name}'" if name else "The data"
        return _head(io.BytesIO(source).read), name, where
    path = Path(source)
    where = f"The data file '{path.name}'"
    try:
        with path.open("rb") as handle:
            head = _head(handle.read)
    except FileNotFoundError:
        raise DataError(f"The data file '{path}' does not exist.") from None
    except IsADirectoryError:
        raise DataError(f"The data path '{path}' is a folder; give a data file.") from None
    except OSError:
        raise DataError(f"{where} cannot be opened; check its permissions.") from None
    return head, filename or path.name, where


def _detect_format(head: bytes, name: str, where: str) -> Format:
    """The format from the extension, refusing content that does not match it."""
    if not head.strip():
        raise DataError(f"{where} is empty; give a file with a header and rows.")
    magic: Format | None = None
    if head.startswith(b"PK\x03\x04"):
        magic = "excel"
    elif head.startswith(b"PAR1"):
        magic = "parquet"
    elif head.startswith(b"\xd0\xcf\x11\xe0"):
        raise DataError(f"{where} is an old Excel .xls file; save it as .xlsx or CSV.")
    suffix = Path(name).suffix.lower()
    if not suffix:
        return magic or "csv"
    fmt = FORMATS.get(suffix)
    if fmt is None:
        hint = " (old Excel files: save as .xlsx)" if suffix == ".xls" else ""
        raise DataError(f"Unsupported data file type '{suffix}'{hint}; use {ALLOWED}.")
    if fmt != magic and (magic is not None or fmt != "csv"):
        actual = {"excel": "an Excel/zip file", "parquet": "a Parquet file", None: "text"}[magic]
        raise DataError(
            f"{where} has the extension {suffix} but its content is {actual}; "
            "give the file the extension that matches its format."
        )
    if fmt == "csv" and b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(
            f"{where} contains NUL bytes, so it is not CSV text (UTF-16 needs a byte-order "
            "mark); save it as UTF-8 CSV."
        )
    return fmt


# --- CSV -------------------------------------------------------------------------------------


# --- Parquet (CSV: csv_file; Excel: excel) ----------------------------------------------------


def _read_parquet(
    source: str | Path | bytes,
    where: str,
    columns: Sequence[str] | None,
    numeric: Collection[str],
    limits: SizeLimits,
) -> pa.Table:
    """Parquet keeps its types: text columns are cast to text, numeric ones to float64."""
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(
            pa.BufferReader(source) if isinstance(source, bytes) else str(source)
        )
        wanted = select_columns(handle.schema_arrow.names, columns, numeric)
        limits.check_parquet(where, handle.metadata, max(1, len(wanted)))
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
