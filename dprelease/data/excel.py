"""Excel (.xlsx) into a column table: refused from its decoded size (shared strings, rows) before
openpyxl decodes it, then read in one streaming pass (read-only mode).
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pyarrow as pa

from dprelease.data.columns import select_columns, text_to_numbers
from dprelease.errors import DataError
from dprelease.limits import DECODED_BYTES_PER_VALUE

if TYPE_CHECKING:
    from dprelease.data.size_limits import SizeLimits


MAX_EXCEL_BYTES = 200_000_000  # uncompressed; refuses zip bombs before openpyxl sees them
SHEET_ROWS = 1_048_576  # the most rows an .xlsx sheet has, by its format (ECMA-376)

# What zipfile and openpyxl raise on a malformed or unsupported .xlsx, measured by mutating a
# valid file's zip bytes and its XML parts (3,000 files each): XML ParseError is a SyntaxError,
# an unsupported zip version or compression a NotImplementedError (a RuntimeError), an
# encrypted member a RuntimeError, bad deflate data zlib.error. Anything else is a bug.
MALFORMED_XLSX: tuple[type[Exception], ...] = (
    KeyError,
    ValueError,
    TypeError,
    IndexError,
    OSError,
    EOFError,
    SyntaxError,
    RuntimeError,
    zlib.error,
    zipfile.BadZipFile,
)


def read_excel(
    source: str | Path | bytes,
    where: str,
    columns: Sequence[str] | None,
    numeric: Collection[str],
    limits: SizeLimits,
) -> pa.Table:
    """The first worksheet, every cell as the text it shows; refuses zip bombs first."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    malformed = (*MALFORMED_XLSX, InvalidFileException)
    handle = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
    unreadable = DataError(f"{where} is not a readable .xlsx file; save it again from Excel.")
    try:
        with zipfile.ZipFile(handle) as archive:
            unpacked = sum(item.file_size for item in archive.infolist())
    except MALFORMED_XLSX:
        raise unreadable from None
    if unpacked > MAX_EXCEL_BYTES:
        raise DataError(
            f"{where} unpacks to more than {MAX_EXCEL_BYTES // 1_000_000} MB; "
            "save it as CSV or Parquet instead."
        )
    try:
        with zipfile.ZipFile(handle) as archive:
            for item in archive.infolist():
                if _WORKSHEET.fullmatch(item.filename):
                    with archive.open(item) as xml:
                        _check_sheet_rows(where, sheet_rows(xml))
    except MALFORMED_XLSX:
        raise unreadable from None
    try:
        book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
    except malformed:
        raise unreadable from None
    try:
        sheet = book.worksheets[0]
        with zipfile.ZipFile(handle) as archive, archive.open(sheet._worksheet_path) as xml:
            _check_sheet_rows(where, sheet.max_row or 0)  # the sheet's <dimension>, if any
            limits.check(where, rows=sheet.max_row or 0)
            rows, decoded = excel_decoded_size(
                xml, [len(s) for s in sheet._shared_strings], where, limits.max_rows
            )
        limits.check(where, rows=rows, decoded_bytes=decoded)
        return _excel_table(sheet.iter_rows(values_only=True), columns, numeric)
    except DataError:
        raise
    except malformed:  # a malformed sheet fails in many ways while streaming
        raise unreadable from None
    finally:
        book.close()


_WORKSHEET = re.compile(r"xl/worksheets/[^/]+\.xml")
_DIMENSION = re.compile(
    rb"""<(?:[A-Za-z_][\w.-]*:)?dimension\s[^>]*ref\s*=\s*["'][^"']*?(\d+)["']"""
)
_CHUNK = 1 << 20


def sheet_rows(sheet_xml: IO[bytes]) -> int:
    """At least a worksheet's rows, from a scan of its bytes that stops past SHEET_ROWS.

    Before openpyxl opens the book: without a <dimension> it parses the whole sheet looking
    for one (measured: 46 s for 1.2 M rows, 5 MB zipped). Counting row tags in the bytes takes
    under a second and stops at row 1,048,577; a sheet's <dimension>, which comes first,
    refuses it at once. The row numbers Excel writes rise, so the last of a chunk is its
    highest; `excel_decoded_size` later counts every row exactly (any order, any prefix).
    """
    rows = 0
    tail = b""
    while chunk := sheet_xml.read(_CHUNK):
        claim = None if rows or tail else _DIMENSION.search(chunk)
        if claim and int(claim.group(1)) > SHEET_ROWS:
            return int(claim.group(1))
        text, tail = tail + chunk, b""
        cut = text.rfind(b"<")  # an unfinished tag waits for the next chunk
        if cut != -1 and b">" not in text[cut:] and len(text) - cut <= _CHUNK:
            text, tail = text[:cut], text[cut:]
        rows += sum(text.count(tag) for tag in (b"<row ", b"<row>", b"<row/>"))
        last = text.rfind(b'<row r="')
        if last != -1:
            digits = text[last + 8 : last + 28].split(b'"', 1)[0]
            rows = max(rows, int(digits) if digits.isdigit() else 0)
        if rows > SHEET_ROWS:
            break
    return rows


def _check_sheet_rows(where: str, rows: int) -> None:
    if rows > SHEET_ROWS:
        raise DataError(
            f"{where} claims more than {SHEET_ROWS:,} rows, the most an .xlsx sheet can hold, so "
            "it is not a valid workbook; save the data as CSV or Parquet."
        )


def excel_decoded_size(
    sheet_xml: IO[bytes],
    shared_lengths: Sequence[int],
    where: str = "The worksheet",
    max_rows: int | None = None,
) -> tuple[int, int]:
    """The rows of a worksheet and the bytes its cells decode to, from one streaming XML pass.

    The pass stops at the first row past SHEET_ROWS or `max_rows` (a sheet of 3 M tiny rows
    is refused at its row 1,048,577, not after all of them).

    A cell of type "s" holds an index into the shared strings, so a few KB of XML can stand
    for gigabytes of text (the shared-string bomb): each such cell costs its string's length.
    Rows are the highest row number, because missing rows are filled in as empty ones. Every
    cell costs at least DECODED_BYTES_PER_VALUE.
    """
    from xml.etree.ElementTree import iterparse

    rows = decoded = 0
    for _, element in iterparse(sheet_xml):
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "c":
            value = next((e.text for e in element if e.tag.endswith("}v")), None) or ""
            length = len(value)
            if element.get("t") == "s" and value.isdigit() and int(value) < len(shared_lengths):
                length = shared_lengths[int(value)]
            decoded += max(length, DECODED_BYTES_PER_VALUE)
            element.clear()
        elif tag == "row":
            number = element.get("r")
            rows = max(rows + 1, int(number)) if number and number.isdigit() else rows + 1
            element.clear()
            _check_sheet_rows(where, rows)
            if max_rows is not None and rows > max_rows:  # refused below: read no further
                break
    return rows, decoded


def _excel_table(
    rows: Iterator[tuple[Any, ...]], columns: Sequence[str] | None, numeric: Collection[str]
) -> pa.Table:
    """Stream the rows, keeping the text of the wanted cells only (memory stays bounded)."""
    header = [_cell_text(v) for v in next(rows, ())]
    while header and header[-1] == "":
        header.pop()
    if not header:
        raise DataError("The first worksheet is empty; give a header row and data rows.")
    wanted = select_columns(header, columns, numeric)
    positions = [header.index(name) for name in wanted]
    texts: list[list[str]] = [[] for _ in wanted]
    kept = 0
    for number, row in enumerate(rows, start=2):
        if all(v is None for v in row):
            continue  # Excel keeps formatted but empty rows
        if any(v is not None for v in row[len(header) :]):
            raise DataError(
                f"Row {number} of the worksheet has values beyond the {len(header)} header "
                "columns; every value needs a column name."
            )
        kept += 1
        for target, position in zip(texts, positions, strict=True):
            target.append(_cell_text(row[position]) if position < len(row) else "")
    arrays = [pa.array(t, pa.string()).dictionary_encode() for t in texts]
    if not wanted:
        return pa.table({"rows": pa.nulls(kept)}).select([])
    return text_to_numbers(pa.table(arrays, names=wanted), [n for n in wanted if n in numeric])


def _cell_text(value: Any) -> str:
    """A cell as the text Excel shows: 3 not 3.0, TRUE/FALSE, ISO dates, empty for no value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value)
