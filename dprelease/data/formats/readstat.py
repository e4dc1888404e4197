"""The statisticians' formats (Stata, SPSS, SAS) through pyreadstat, the well-kept binding of
ReadStat: shared by the `stata`, `spss`, `sas` and `xport` reader modules.

Every read starts from the metadata alone (`metadataonly=True`: names, rows, labels), so a file
announcing more rows or decoded bytes than the limits is refused before a record is decoded;
then rows are read in chunks (`row_offset`/`row_limit`) of at most CHUNK_BYTES decoded, each
turned into a pyarrow RecordBatch, so counting, the fingerprint and statistics see batches as
they do for CSV and Parquet. Numbers stay float64 (Stata and SPSS store them so; the
fingerprint writes 34.0 as 34, like the CSV's text), 4-byte floats are widened through their
shortest text (0.1, not 0.10000000149), dates become ISO text, missing values are nulls.
Value and variable labels are the producer's declared metadata (`declared`), never data.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from dprelease.data.columns import as_text, float_column, float_values, select_columns
from dprelease.data.formats import allowed
from dprelease.data.formats.base import Described, ReadRequest
from dprelease.data.formats.declared import DeclaredMetadata, declared_from
from dprelease.errors import DataError
from dprelease.limits import DECODED_BYTES_PER_VALUE

if TYPE_CHECKING:
    from dprelease.data.size_limits import SizeLimits

CHUNK_BYTES = 64 << 20  # decoded per chunk: pandas' frame and its arrow copy stay small
MAX_CHUNK_ROWS = 1 << 20  # as the Arrow engine's Parquet batches


def chunk_rows(row_bytes: int) -> int:
    """Rows per chunk: CHUNK_BYTES over a row's decoded bytes, at least 1,000."""
    return max(1_000, min(MAX_CHUNK_ROWS, CHUNK_BYTES // max(1, row_bytes)))


def row_bytes(meta: Any, names: Sequence[str]) -> int:
    """A row's decoded bytes at least: 8 per value, a text column's declared width."""
    widths = getattr(meta, "variable_storage_width", None) or {}
    return sum(max(DECODED_BYTES_PER_VALUE, int(widths.get(n) or 0)) for n in names)


@dataclass(frozen=True)
class ReadstatFormat:
    """One pyreadstat reader function and how messages name its files."""

    function: str  # pyreadstat's: read_dta, read_sav, read_sas7bdat, read_xport
    label: str  # "a Stata .dta file"

    def _call(self, source: str | Path | bytes, where: str, **options: Any) -> tuple[Any, Any]:
        """One pyreadstat call; a file it cannot parse is one line naming what is allowed."""
        import pyreadstat

        target = io.BytesIO(source) if isinstance(source, bytes) else str(source)
        try:
            return getattr(pyreadstat, self.function)(target, **options)  # type: ignore[no-any-return]
        except FileNotFoundError:
            raise DataError(f"{where} does not exist.") from None
        # ReadStat's errors name the problem, never a value; dates past year 9999 overflow
        except (
            pyreadstat.ReadstatError,
            pyreadstat.PyreadstatError,
            OverflowError,
            UnicodeError,
            ValueError,
        ):
            raise DataError(
                f"{where} is not readable as {self.label} (damaged, or another format); "
                f"save it again, or give one of {allowed()}."
            ) from None

    def metadata(self, source: str | Path | bytes, where: str) -> Any:
        return self._call(source, where, metadataonly=True)[1]

    def _checked(
        self,
        source: str | Path | bytes,
        where: str,
        columns: Sequence[str] | None,
        numeric: Sequence[str],
        limits: SizeLimits,
    ) -> tuple[Any, list[str]]:
        """The metadata and the columns to read, after the limits' check from the header."""
        meta = self.metadata(source, where)
        wanted = select_columns(list(meta.column_names), columns, numeric)
        rows = max(0, int(meta.number_rows or 0))  # a transport file may not say (None)
        limits.check(where, rows=rows, decoded_bytes=rows * row_bytes(meta, wanted))
        return meta, wanted

    def batches(
        self, location: str, where: str, columns: Sequence[str], limits: SizeLimits
    ) -> Iterator[pa.RecordBatch]:
        """The Arrow engine's stream: `columns` (all when empty) in chunks, typed as read."""
        meta, wanted = self._checked(location, where, list(columns) or None, (), limits)
        yield from self._chunks(location, where, meta, wanted, limits)

    def _chunks(
        self,
        source: str | Path | bytes,
        where: str,
        meta: Any,
        wanted: list[str],
        limits: SizeLimits,
    ) -> Iterator[pa.RecordBatch]:
        read = wanted or list(meta.column_names)[:1]  # no column asked (a total): count rows
        narrow = {n for n, kind in meta.readstat_variable_types.items() if kind == "float"}
        step = chunk_rows(row_bytes(meta, read))
        offset = 0
        while True:
            frame, _ = self._call(source, where, usecols=read, row_offset=offset, row_limit=step)
            if len(frame) == 0:
                return
            offset += len(frame)
            limits.check(where, rows=offset)  # a file that did not announce its rows
            yield frame_batch(frame, read, narrow).select(wanted)
            if len(frame) < step:
                return

    def read_table(self, request: ReadRequest) -> pa.Table:
        """`read_data`'s table: `numeric` columns float64, every other column as text."""
        numeric = list(request.numeric)
        meta, wanted = self._checked(
            request.source, request.where, request.columns, numeric, request.limits
        )
        batches = list(self._chunks(request.source, request.where, meta, wanted, request.limits))
        if not batches:
            return pa.table({n: pa.array([], pa.string()) for n in wanted})
        table = pa.Table.from_batches(batches)
        for index, name in enumerate(wanted):
            column = table.column(index)
            if name in request.numeric:
                values = float_column(float_values(column, name))
            else:
                values = as_text(column.combine_chunks(), name).dictionary_encode()
            table = table.set_column(index, name, values)
        return table

    def describe(self, path: Path, head: bytes, where: str, limits: SizeLimits) -> Described:
        meta, names = self._checked(path, where, None, (), limits)
        return Described(tuple(names), rows=meta.number_rows)

    def declared(self, source: str | Path | bytes, where: str) -> DeclaredMetadata:
        """The value and variable labels the file declares (read from its header only)."""
        return declared_from(self.metadata(source, where))


def frame_batch(frame: Any, names: Sequence[str], narrow: set[str]) -> pa.RecordBatch:
    """A pyreadstat chunk (pandas) as a RecordBatch: float64 numbers with nulls, text as
    dictionary strings, dates and times as ISO text."""
    import numpy as np

    arrays = []
    for name in names:
        series = frame[name]
        if name in narrow:  # a 4-byte float: its shortest text, as Stata shows it
            values = series.to_numpy(dtype=np.float64)
            series = values.astype(np.float32).astype(str).astype(np.float64)
        array = pa.array(series, from_pandas=True)
        arrays.append(_normal(array, name))
    return pa.RecordBatch.from_arrays(arrays, names=list(names))


def _normal(array: pa.Array, name: str) -> pa.Array:
    kind = array.type
    if pa.types.is_floating(kind) or pa.types.is_integer(kind):
        return array.cast(pa.float64())
    if pa.types.is_timestamp(kind):
        import pyarrow.compute as pc

        seconds = array.cast(pa.timestamp("s"), safe=False)
        return pc.strftime(seconds, format="%Y-%m-%dT%H:%M:%S").dictionary_encode()
    if pa.types.is_null(kind):
        return pa.nulls(len(array), pa.string()).dictionary_encode()
    return as_text(array, name).dictionary_encode()
