"""Reading data files (CSV, Parquet, Excel) into a column table, text exactly as written.

The one place that turns bytes into a `pyarrow.Table`. Every column is read as text ("01"
stays "01", "" and "NA" stay as written) unless it is named in `numeric`: those are float64,
null or NaN where a value is missing, NaN where it is not a number (encoding counts both as
missing). Errors are `DataError`s with one line that names columns and line numbers but
never a record value. Nothing on the CSV path imports pandas (pyarrow does so lazily in
`pa.array` and `to_numpy`, so those are avoided there): the CLI must start fast.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import math
import re
import zipfile
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from dprelease.errors import DataError, quote
from dprelease.limits import DECODED_BYTES_PER_VALUE, MAX_DATA_MB, MAX_ROWS
from dprelease.plan.model import did_you_mean

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
TEXT = pa.dictionary(pa.int32(), pa.string())  # measured: faster than string + encode later
DELIMITERS = (",", ";", "\t", "|")
FALLBACK_ENCODINGS = ("cp1252", "latin-1")  # tried in turn when the bytes are not UTF-8
NULL_NUMBERS = ["", "NA", "N/A", "NaN", "nan", "NULL", "null", "."]  # numeric columns only
HEAD_BYTES = 1 << 16
MAX_HEADER_BYTES = 16 << 20  # the header line (100,000 columns fit easily) is read whole
MAX_LINE_BYTES = 64 << 20  # a longer line is refused: pyarrow needs a block to hold a row
SNIFF_LINES = 50
MAX_EXCEL_BYTES = 200_000_000  # uncompressed; refuses zip bombs before openpyxl sees them
EXPECTED_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")


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
            table = _read_csv(source, head, where, columns, numeric)
        elif fmt == "parquet":
            table = _read_parquet(source, where, columns, numeric, limits)
        else:
            table = _read_excel(source, where, columns, numeric, limits)
    except pa.ArrowException:  # a safety net: pyarrow's messages may quote record values
        raise DataError(f"{where} could not be read as {fmt}; check the file.") from None
    if table.num_rows == 0:
        raise DataError(f"{where} has column names but no rows of data; give at least one row.")
    limits.check(where, rows=table.num_rows)  # CSV: bytes on disk are the decoded size
    return table


@dataclass(frozen=True)
class SizeLimits:
    """The decoded size a read may reach: bytes and rows (None: no limit).

    Checked against what a file's metadata announce before it is decoded (a Parquet file of
    300 M constant rows is 1.9 MB on disk), and against the rows seen while streaming.
    """

    max_bytes: int | None = MAX_DATA_MB * 1_000_000
    max_rows: int | None = MAX_ROWS

    def check(self, where: str, *, rows: int = 0, decoded_bytes: int = 0) -> None:
        if self.max_rows is not None and rows > self.max_rows:
            raise DataError(
                f"{where} has more than {self.max_rows:,} rows ({rows:,} announced or read so "
                "far), the row limit; raise it with --max-rows if the data are really that large."
            )
        if self.max_bytes is not None and decoded_bytes > self.max_bytes:
            raise DataError(
                f"{where} decodes to at least {decoded_bytes / 1e6:,.0f} MB, more than the "
                f"limit of {self.max_bytes / 1e6:,.0f} MB (a small file can unpack to much "
                "more); raise the limit with --max-data-mb if the data are really that large."
            )

    def check_parquet(self, where: str, metadata: Any, columns: int) -> None:
        """Rows from the row groups, decoded bytes at least rows × columns × 8."""
        rows = int(metadata.num_rows)
        self.check(where, rows=rows, decoded_bytes=rows * columns * DECODED_BYTES_PER_VALUE)


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


def _select(
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
                encoded.indices, _as_text(encoded.dictionary, name)
            )
    else:
        encoded = _as_text(column.combine_chunks(), name).dictionary_encode()
    texts = encoded.dictionary.to_pylist()
    indices = _numpy(encoded.indices.cast(pa.int32()), np.int32, len(texts))
    return texts, indices


def _as_text(array: pa.Array, name: str) -> pa.Array:
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


def _float_column(values: np.ndarray) -> pa.Array:
    values = np.ascontiguousarray(values, np.float64)
    return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])


def _text_to_numbers(table: pa.Table, numeric: Iterable[str]) -> pa.Table:
    """Replace text columns named in `numeric` by float64 columns."""
    for name in numeric:
        index = table.column_names.index(name)
        values = _float_column(float_values(table.column(name), name))
        table = table.set_column(index, name, values)
    return table


# --- CSV -------------------------------------------------------------------------------------


def _read_csv(
    source: str | Path | bytes,
    head: bytes,
    where: str,
    columns: Sequence[str] | None,
    numeric: Collection[str],
) -> pa.Table:
    """Sniff encoding, delimiter and header from the first lines, then let pyarrow read it all."""
    encodings, delimiter, header = csv_layout(head, where)
    wanted = _select(header, columns, numeric)
    include = tuple(wanted or header[:1])  # pyarrow reads every column when given none
    as_float = [n for n in include if n in numeric]
    for encoding in encodings:
        csv_file = _CsvFile(source, encoding, delimiter, include, one_column=len(header) == 1)
        try:
            return csv_file.read_with_numbers(as_float, where).select(wanted)
        except UnicodeDecodeError:
            continue  # transcoding failed: try the next encoding
        except pa.ArrowException as error:
            if "invalid UTF8" in str(error):
                continue
            raise csv_file.error(str(error), where) from None
    raise DataError(f"{where} is not readable text (tried UTF-8, cp1252, Latin-1); save as UTF-8.")


def csv_layout(head: bytes, where: str) -> tuple[tuple[str, ...], str, list[str]]:
    """The encodings to try, the delimiter and the header, sniffed from the first lines."""
    complete = len(head) < HEAD_BYTES
    if not complete and b"\n" not in head and b"\r" not in head:
        raise DataError(
            f"{where} has no line break in its first {MAX_HEADER_BYTES >> 20} MB; the first "
            "line must be the column names, then one line per record."
        )
    encodings, sample = _sample_text(head, complete)
    delimiter = _sniff_delimiter(sample)
    try:
        header = next(csv.reader(io.StringIO(sample), delimiter=delimiter), [])
    except csv.Error:
        raise DataError(
            f"{where} has a column name over {csv.field_size_limit() // 1024} KB or a broken "
            "header line; the first line must be the column names."
        ) from None
    if not sample.strip() or not header:
        raise DataError(f"{where} is empty; give a file with a header and rows.")
    return encodings, delimiter, header


def _sample_text(head: bytes, complete: bool) -> tuple[tuple[str, ...], str]:
    """The encodings to try (in order) and the first lines decoded with the first of them.

    A byte-order mark decides; otherwise UTF-8 unless the first lines are not valid UTF-8.
    Only this sample is decoded in Python; pyarrow decodes the whole file.
    """
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        cut = head if complete else head[: len(head) - len(head) % 2]
        return ("utf-16",), _first_lines(cut.decode("utf-16", errors="replace"), complete)
    cut = head if complete else head[: head.rfind(b"\n") + 1] or head
    try:
        return ("utf-8", *FALLBACK_ENCODINGS), _first_lines(cut.decode("utf-8-sig"), complete)
    except UnicodeDecodeError:
        return FALLBACK_ENCODINGS, _first_lines(cut.decode("cp1252", errors="replace"), complete)


def _first_lines(text: str, complete: bool) -> str:
    lines = text.splitlines(keepends=True)
    if not complete and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut short
    return "".join(lines[:SNIFF_LINES])


def _sniff_delimiter(sample: str) -> str:
    """The candidate that splits every sample line into the same number (>1) of fields.

    Most fields wins, ties go to the order , ; TAB |. When no candidate is consistent
    (ragged lines, one column), `csv.Sniffer` restricted to the candidates guesses; else ','.
    """
    best, best_fields = None, 1
    for delimiter in DELIMITERS:
        try:
            widths = {len(r) for r in csv.reader(io.StringIO(sample), delimiter=delimiter) if r}
        except csv.Error:  # e.g. a "field" over the csv module's limit: not this delimiter
            continue
        if len(widths) == 1 and (fields := widths.pop()) > best_fields:
            best, best_fields = delimiter, fields
    if best is not None:
        return best
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        return ","


@dataclass(frozen=True)
class _CsvFile:
    """One way of reading a CSV file with pyarrow: its encoding, delimiter, columns to read."""

    source: str | Path | bytes
    encoding: str
    delimiter: str
    include: tuple[str, ...]
    one_column: bool  # then an empty line is an empty value, not a blank line to skip
    block_size: int | None = None  # pyarrow's default (1 MB) unless a line is longer

    def read(self, as_float: Collection[str] = (), invalid_row_handler: Any = None) -> pa.Table:
        """One multithreaded pyarrow read; text is never turned into nulls."""
        data = pa.py_buffer(self.source) if isinstance(self.source, bytes) else str(self.source)
        options = self._options(as_float, invalid_row_handler)
        return pacsv.read_csv(data, **options)

    def stream(self) -> Iterator[pa.RecordBatch]:
        """The same read as record batches of about `block_size` bytes, every column as text."""
        data = pa.py_buffer(self.source) if isinstance(self.source, bytes) else str(self.source)
        yield from pacsv.open_csv(data, **self._options((), None))

    def _options(self, as_float: Collection[str], invalid_row_handler: Any) -> dict[str, Any]:
        read = pacsv.ReadOptions(encoding=self.encoding, use_threads=invalid_row_handler is None)
        if self.block_size is not None:
            read.block_size = self.block_size
        parse = pacsv.ParseOptions(
            delimiter=self.delimiter,
            newlines_in_values=True,  # measured: no slower, and quoted newlines stay in a value
            ignore_empty_lines=not self.one_column,
            invalid_row_handler=invalid_row_handler,
        )
        convert = pacsv.ConvertOptions(
            column_types={n: pa.float64() if n in as_float else TEXT for n in self.include},
            include_columns=list(self.include),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=NULL_NUMBERS,
        )
        return {"read_options": read, "parse_options": parse, "convert_options": convert}

    def read_with_numbers(self, as_float: Collection[str], where: str) -> pa.Table:
        """Numeric columns as float64; if one has text, read them as text and parse each value.

        A line longer than pyarrow's block is read again with blocks of MAX_LINE_BYTES.
        """
        try:
            try:
                return self.read(as_float)
            except pa.ArrowInvalid as error:
                if "conversion error to double" not in str(error):
                    raise
            return _text_to_numbers(self.read(), as_float)
        except pa.ArrowInvalid as error:
            if "straddl" not in str(error):
                raise
            if self.block_size is not None:
                raise DataError(
                    f"{where} has a line longer than {MAX_LINE_BYTES >> 20} MB; each line must "
                    "be one record (an unclosed quote turns the rest of the file into one value)."
                ) from None
        return dataclasses.replace(self, block_size=MAX_LINE_BYTES).read_with_numbers(
            as_float, where
        )

    def error(self, problem: str, where: str) -> DataError:
        """A pyarrow CSV error as one line without record values (pyarrow quotes the row)."""
        fields = EXPECTED_FIELDS.search(problem)
        if fields is None:
            return DataError(f"{where} could not be read as CSV; check that it is delimited text.")
        expected, got = fields.groups()
        line = self.first_ragged_line()
        at = f"Line {line}" if line is not None else "A line"
        name = {"\t": "TAB"}.get(self.delimiter, f"'{self.delimiter}'")
        return DataError(
            f"{at} of the data has {got} field{'' if got == '1' else 's'} but the header has "
            f"{expected}; every line needs "
            f"exactly {expected} (the delimiter found is {name}; check quoting)."
        )

    def first_ragged_line(self) -> int | None:
        """The line number of the first ragged row: a single-threaded re-read stopping there."""
        found: list[int | None] = []

        def stop(row: Any) -> str:
            found.append(row.number)
            return "error"

        with contextlib.suppress(pa.ArrowException, UnicodeDecodeError):
            self.read(invalid_row_handler=stop)  # raises at the first ragged row, as asked
        return found[0] if found else None


# --- Parquet and Excel -----------------------------------------------------------------------


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
        wanted = _select(handle.schema_arrow.names, columns, numeric)
        limits.check_parquet(where, handle.metadata, max(1, len(wanted)))
        table = handle.read(columns=wanted)
    except (pa.ArrowException, OSError):
        raise DataError(f"{where} is not a readable Parquet file.") from None
    for index, name in enumerate(wanted):
        column = table.column(index)
        if name in numeric:
            values = _float_column(float_values(column, name))
        elif pa.types.is_dictionary(column.type) and pa.types.is_string(column.type.value_type):
            values = column
        else:
            values = _as_text(column.combine_chunks(), name).dictionary_encode()
        table = table.set_column(index, name, values)
    return table


def _read_excel(
    source: str | Path | bytes,
    where: str,
    columns: Sequence[str] | None,
    numeric: Collection[str],
    limits: SizeLimits,
) -> pa.Table:
    """The first worksheet, every cell as the text it shows; refuses zip bombs first."""
    import openpyxl

    handle = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
    unreadable = DataError(f"{where} is not a readable .xlsx file; save it again from Excel.")
    try:
        with zipfile.ZipFile(handle) as archive:
            unpacked = sum(item.file_size for item in archive.infolist())
    except (zipfile.BadZipFile, OSError):
        raise unreadable from None
    if unpacked > MAX_EXCEL_BYTES:
        raise DataError(
            f"{where} unpacks to more than {MAX_EXCEL_BYTES // 1_000_000} MB; "
            "save it as CSV or Parquet instead."
        )
    try:
        book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
    except Exception:  # openpyxl raises many types (KeyError, XML errors, ...) on bad files
        raise unreadable from None
    try:
        sheet = book.worksheets[0]
        with zipfile.ZipFile(handle) as archive, archive.open(sheet._worksheet_path) as xml:
            limits.check(where, rows=sheet.max_row or 0)  # the sheet's <dimension>, if any
            rows, decoded = excel_decoded_size(xml, [len(s) for s in sheet._shared_strings])
        limits.check(where, rows=rows, decoded_bytes=decoded)
        return _excel_table(sheet.iter_rows(values_only=True), columns, numeric)
    except DataError:
        raise
    except Exception:  # as above: a malformed sheet fails in many ways while streaming
        raise unreadable from None
    finally:
        book.close()


def excel_decoded_size(sheet_xml: IO[bytes], shared_lengths: Sequence[int]) -> tuple[int, int]:
    """The rows of a worksheet and the bytes its cells decode to, from one streaming XML pass.

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
    wanted = _select(header, columns, numeric)
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
    return _text_to_numbers(pa.table(arrays, names=wanted), [n for n in wanted if n in numeric])


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
