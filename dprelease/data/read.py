"""Reading data files (any registered format: `data.formats`) into a column table, text exactly
as written.

The one place that turns bytes into a `pyarrow.Table`; the format comes from the registry.
Every column is read as text ("01" stays "01", "" and "NA" stay as written) unless it is
named in `numeric`: those are float64, null or NaN where a value is missing, NaN where it is
not a number (encoding counts both as missing). Errors are `DataError`s with one line that
names columns and line numbers but never a record value. Nothing on the CSV path imports
pandas (pyarrow does so lazily in `pa.array` and `to_numpy`, so those are avoided there):
the CLI must start fast.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import pyarrow as pa

from dprelease.data import formats
from dprelease.data.csv_file import HEAD_BYTES, MAX_HEADER_BYTES
from dprelease.data.formats.base import ReadRequest
from dprelease.data.size_limits import SizeLimits as SizeLimits  # re-exported: the readers' callers
from dprelease.errors import DataError, InternalError
from dprelease.limits import MAX_DATA_MB, MAX_ROWS


def read_data(
    source: str | Path | bytes,
    *,
    filename: str | None = None,
    columns: Sequence[str] | None = None,
    numeric: Collection[str] = (),
    max_bytes: int | None = MAX_DATA_MB * 1_000_000,
    max_rows: int | None = MAX_ROWS,
) -> pa.Table:
    """Read `columns` (default all, plus those in `numeric`) of a data file (`data.formats`).

    The format comes from the extension of `filename` (default: the path's name); bytes
    without a name are recognised by their signature. Text columns are dictionary-encoded
    strings; `numeric` columns are float64 (null or NaN where missing, NaN where not a number).
    A file larger than `max_bytes` on disk, or whose metadata announce more decoded bytes or
    more than `max_rows` rows (a decompression bomb), is refused before anything is decoded.
    """
    _check_size(source, filename, max_bytes)
    limits = SizeLimits(max_bytes, max_rows)
    head, name, where = _open(source, filename)
    reader = detect_reader(head, name, where)
    request = ReadRequest(source, head, where, columns, numeric, limits)
    try:
        table = reader.implementation().read_table(request)
    except pa.ArrowException:  # a safety net: pyarrow's messages may quote record values
        raise DataError(f"{where} could not be read as {reader.label}; check the file.") from None
    if not isinstance(table, pa.Table):
        raise InternalError(f"the {reader.name} reader returned no table")
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
    if formats.for_content(head) is not None:
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


def detect_reader(head: bytes, name: str, where: str) -> formats.Reader:
    """The format from the extension, refusing content that does not match it."""
    return formats.detect(head, name, where)
