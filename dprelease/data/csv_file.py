"""CSV into a column table: encoding, delimiter and header sniffed from the first lines, then
pyarrow reads it all (in blocks that must hold the longest line).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from dprelease.data.columns import TEXT, select_columns, text_to_numbers
from dprelease.errors import DataError

DELIMITERS = (",", ";", "\t", "|")


FALLBACK_ENCODINGS = ("cp1252", "latin-1")  # tried in turn when the bytes are not UTF-8


NULL_NUMBERS = ["", "NA", "N/A", "NaN", "nan", "NULL", "null", "."]  # numeric columns only


HEAD_BYTES = 1 << 16


MAX_HEADER_BYTES = 16 << 20  # the header line (100,000 columns fit easily) is read whole


MAX_LINE_BYTES = 64 << 20  # a longer line is refused: pyarrow needs a block to hold a row


SNIFF_LINES = 50


EXPECTED_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")


def read_csv(
    source: str | Path | bytes,
    head: bytes,
    where: str,
    columns: Sequence[str] | None,
    numeric: Collection[str],
) -> pa.Table:
    """Sniff encoding, delimiter and header from the first lines, then let pyarrow read it all."""
    encodings, delimiter, header = csv_layout(head, where)
    wanted = select_columns(header, columns, numeric)
    include = tuple(wanted or header[:1])  # pyarrow reads every column when given none
    as_float = [n for n in include if n in numeric]
    for encoding in encodings:
        csv_file = CsvFile(source, encoding, delimiter, include, one_column=len(header) == 1)
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
class CsvFile:
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
            return text_to_numbers(self.read(), as_float)
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
