"""The Arrow engine: stream record batches, encode and count each, add up the counts.

Memory is bounded by the plan's cells and one batch (about BATCH_ROWS rows of the columns
read), never by the rows: CSV is parsed in blocks of BLOCK_BYTES, Parquet (a file or a folder
of parts) in batches of BATCH_ROWS, reading only the plan's columns, or all of them when an
accumulator (a fingerprint of the records) must see every batch. Each batch goes through the
in-memory path's own `encode` and `count`, so the sums are exactly its counts and report.

Streaming cannot cap the rows of a unit (`unit: id`) whose rows lie in different batches, so
under `unit: id` a file of at most IN_MEMORY_BYTES (an .xlsx always) is read whole, once, and
counted by the in-memory path, which caps every unit over all its rows; a larger file or a
folder is refused with the engines that stream it (DuckDB and Spark cap across batches, see
`grouped`, and `auto` picks one of them for such plans).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pyarrow as pa

from dprelease.data import csv_file as csv_module
from dprelease.data import formats
from dprelease.data.count import count, encode, load_data
from dprelease.data.csv_file import CsvFile
from dprelease.data.engines.registry import EngineRun
from dprelease.data.engines.result import (
    BatchAccumulator,
    CountResult,
    empty_counts,
    frozen_counts,
)
from dprelease.data.engines.source import DataSource, check_columns
from dprelease.data.read import SizeLimits
from dprelease.data.report import DataReport, merge_reports
from dprelease.errors import DataError, InternalError
from dprelease.plan.model import Plan

if TYPE_CHECKING:
    import pyarrow.parquet as pq

BATCH_ROWS = 1 << 20
_T = TypeVar("_T")
IN_MEMORY_BYTES = 256 << 20  # a smaller CSV is read whole, in parallel, as read_data does
BLOCK_BYTES = 16 << 20  # CSV: about 170,000 rows of the census sample per batch


def block_bytes() -> int:
    """The CSV block: a line must fit in one, so it is also the longest line allowed."""
    return min(BLOCK_BYTES, csv_module.MAX_LINE_BYTES)


class _WrongEncoding(Exception):
    """The CSV is not in the encoding being tried: start again with the next one."""


class _LongLine(Exception):
    """A line does not fit in a block: start again with blocks of MAX_LINE_BYTES."""


def count_arrow(
    source: DataSource,
    plan: Plan,
    limits: SizeLimits,
    new_accumulator: Callable[[], BatchAccumulator] | None = None,
) -> CountResult:
    """True counts and data report by streaming batches (unit: row only)."""
    if formats.reader(source.fmt).whole:  # an .xlsx
        return count_whole(source, plan, limits, new_accumulator)
    if plan.unit.kind == "id":
        if not _fits_in_memory(source):
            raise DataError(
                f"The arrow engine caps the rows per unit (`unit: id`) only for a file of at "
                f"most {IN_MEMORY_BYTES >> 20} MB, read whole; {source.where} is larger or a "
                "folder: use --engine duckdb or spark (auto picks one)."
            )
        return count_whole(source, plan, limits, new_accumulator)
    needed = check_columns(source, plan)
    if new_accumulator is not None and _small_csv(source):
        # charged: one multithreaded read of every column, then the fingerprint hashes it on
        # its own thread while the plan's columns are encoded and counted (issue 34)
        return count_whole(source, plan, limits, new_accumulator)
    if _small_csv(source):
        # measured: one multithreaded read is faster than streaming at this size (1 M rows
        # whole-process 1.3× the numpy floor instead of 2.6×), and it is the in-memory path
        encoded = load_data(source.location, plan, max_bytes=limits.max_bytes)
        limits.check(source.where, rows=encoded.report.rows_read)
        return CountResult(count(encoded, plan), encoded.report, "arrow")
    read = list(source.columns) if new_accumulator else needed

    def counted(batches: Iterator[pa.RecordBatch]) -> CountResult:
        accumulator = new_accumulator() if new_accumulator else None
        return _accumulate(batches, plan, needed, source.where, limits, accumulator)

    return _with_retries(source, read, counted)


def count_whole(
    source: DataSource,
    plan: Plan,
    limits: SizeLimits,
    new_accumulator: Callable[[], BatchAccumulator] | None = None,
) -> CountResult:
    """A file read whole, once: an .xlsx on every engine (at most MAX_EXCEL_BYTES unpacked,
    every column as text), and a small CSV or Parquet file under `unit: id`. The accumulator
    sees those records, the in-memory path counts them (`unit: id` included: every row of a
    unit is in the one table)."""
    table = _whole_table(source, limits)
    accumulator = new_accumulator() if new_accumulator else None
    if accumulator is not None:  # whole: a CSV's many small blocks would cost per block
        accumulator(table)
    read = dataclasses.replace(source, columns=tuple(table.column_names))
    encoded = encode(table.select(check_columns(read, plan)), plan)
    return CountResult(count(encoded, plan), encoded.report, "arrow", accumulator)


def _whole_table(source: DataSource, limits: SizeLimits) -> pa.Table:
    from dprelease.data.read import read_data

    return read_data(source.location, max_bytes=limits.max_bytes, max_rows=limits.max_rows)


def _fits_in_memory(source: DataSource) -> bool:
    """A single local file of at most IN_MEMORY_BYTES on disk (not a folder, not a URI)."""
    from pathlib import Path

    path = Path(source.location)
    return path.is_file() and path.stat().st_size <= IN_MEMORY_BYTES


def _small_csv(source: DataSource) -> bool:
    """A CSV file small enough to read whole (IN_MEMORY_BYTES on disk)."""
    from pathlib import Path

    return source.fmt == "csv" and Path(source.location).stat().st_size <= IN_MEMORY_BYTES


def scan_all(
    source: DataSource, limits: SizeLimits, accumulator: BatchAccumulator
) -> BatchAccumulator:
    """Feed every batch, all columns, to `accumulator` (for engines that do not stream here).

    On a retry (another encoding, longer lines) the accumulator sees the data again from the
    start; give one that a new pass resets, or make it after a successful count. An .xlsx is
    read whole (`count_whole`); a URI only Spark reads (`spark.fingerprint_spark`).
    """
    if source.remote:
        raise InternalError("a URI is read by Spark, not scanned here")
    if formats.reader(source.fmt).whole:  # an .xlsx
        for batch in _whole_table(source, limits).to_batches(max_chunksize=BATCH_ROWS):
            accumulator(batch)
        return accumulator

    def scanned(batches: Iterator[pa.RecordBatch]) -> BatchAccumulator:
        rows = 0
        for batch in batches:
            rows += batch.num_rows
            limits.check(source.where, rows=rows)
            accumulator(batch)
        return accumulator

    return _with_retries(source, list(source.columns), scanned)


def _with_retries(
    source: DataSource, columns: list[str], consume: Callable[[Iterator[pa.RecordBatch]], _T]
) -> _T:
    """`consume` one pass; a CSV is passed again with the next encoding or bigger blocks."""
    if source.fmt == "parquet":
        return consume(_parquet_batches(source, columns))
    streams = formats.reader(source.fmt).implementation()
    if hasattr(streams, "batches"):  # a registered reader's own chunks (Stata, SPSS, SAS);
        # `describe` checked the limits from the header, `consume` checks the rows it sees
        unchecked = SizeLimits(None, None)
        return consume(streams.batches(source.location, source.where, columns, unchecked))
    for encoding in source.encodings:
        block = block_bytes()
        while True:
            csv_file = CsvFile(
                source.location,
                encoding,
                source.delimiter,
                tuple(columns or source.columns[:1]),
                one_column=len(source.columns) == 1,
                block_size=block,
            )
            try:
                return consume(_csv_batches(csv_file, source.where, columns))
            except _WrongEncoding:
                break
            except _LongLine:
                if block >= csv_module.MAX_LINE_BYTES:
                    raise DataError(
                        f"{source.where} has a line longer than {block >> 20} MB; each line "
                        "must be one record (an unclosed quote turns the rest of the file into "
                        "one value)."
                    ) from None
                block = csv_module.MAX_LINE_BYTES
    raise DataError(
        f"{source.where} is not readable text (tried UTF-8, cp1252, Latin-1); save as UTF-8."
    )


def _accumulate(
    batches: Iterator[pa.RecordBatch],
    plan: Plan,
    needed: list[str],
    where: str,
    limits: SizeLimits,
    accumulator: BatchAccumulator | None,
) -> CountResult:
    totals = empty_counts(plan)
    report: DataReport | None = None
    rows = 0
    for batch in batches:
        if accumulator is not None:
            accumulator(batch)
        rows += batch.num_rows
        limits.check(where, rows=rows)
        if batch.num_rows == 0:
            continue
        encoded = encode(pa.Table.from_batches([batch]).select(needed), plan)
        for name, cells in count(encoded, plan).counts.items():
            np.add(totals[name], cells, out=totals[name])
        report = encoded.report if report is None else merge_reports([report, encoded.report])
    if report is None:
        raise DataError(f"{where} has column names but no rows of data; give at least one row.")
    return CountResult(frozen_counts(totals, report.rows_read), report, "arrow", accumulator)


def _csv_batches(csv_file: CsvFile, where: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """Every column as text (numbers are parsed by encoding, as `read_data` does)."""
    try:
        for batch in csv_file.stream():
            yield batch.select(columns) if columns else batch
    except UnicodeDecodeError:
        raise _WrongEncoding from None
    except pa.ArrowException as error:
        if "invalid UTF8" in str(error):
            raise _WrongEncoding from None
        if "straddl" in str(error):
            raise _LongLine from None
        raise dataclasses.replace(csv_file, block_size=None).error(str(error), where) from None


def _parquet_batches(source: DataSource, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """Batches of the part files in turn; text columns with few distinct values come
    dictionary-encoded (cheaper to count and to hash: `_few_values`).

    One file and one row group at a time (`ParquetFile.iter_batches`): measured, the dataset
    scanner's read-ahead held 2-3 GB at 100 M rows, this holds one row group.
    """
    import pyarrow.parquet as pq

    try:
        for path in source.files:
            handle = pq.ParquetFile(path)
            schema = handle.schema_arrow
            text = [
                n
                for n in columns
                if pa.types.is_string(schema.field(n).type) and _few_values(handle.metadata, n)
            ]
            handle = pq.ParquetFile(path, read_dictionary=text)
            # A reader per row group: one reader over the whole file held on to its buffers,
            # growing by about 5 MB a batch (1.35 GB over the 100 M-row benchmark file).
            for group in range(handle.metadata.num_row_groups):
                yield from handle.iter_batches(
                    batch_size=BATCH_ROWS, columns=columns, row_groups=[group]
                )
    except (pa.ArrowException, OSError):
        raise DataError(f"{source.where} is not a readable Parquet file.") from None


DICTIONARY_PAGE_BYTES = 64 << 10


def _few_values(metadata: pq.FileMetaData, name: str) -> bool:
    """Whether every row group keeps column `name` in a small dictionary page. A column of
    mostly distinct values (an identifier) overflows the writer's dictionary and falls back
    to plain pages, which arrow would re-encode value by value: measured on 10 M rows of a
    household id, 1.85 s read as a dictionary against 0.50 s read plain (issue 34)."""
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        chunks = (group.column(i) for i in range(group.num_columns))
        chunk = next((c for c in chunks if c.path_in_schema == name), None)
        start = None if chunk is None else chunk.dictionary_page_offset
        if chunk is None or not chunk.has_dictionary_page or start is None:
            return False
        if chunk.data_page_offset - start > DICTIONARY_PAGE_BYTES:
            return False
    return True


def engine_count(source: DataSource, plan: Plan, limits: SizeLimits, run: EngineRun) -> CountResult:
    """The registry's entry (`registry.ENGINES`): stream the batches, the accumulator too."""
    return count_arrow(source, plan, limits, run.new_accumulator)
