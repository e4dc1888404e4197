"""SizeLimits: the decoded size a read may reach, checked from a file's metadata before it is
decoded (its own module so that every reader, CSV, Parquet and Excel alike, imports it without
importing `read`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import DataError
from dprelease.limits import DECODED_BYTES_PER_VALUE, MAX_DATA_MB, MAX_ROWS


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


_COUNT_NS_PER_VALUE = 40  # reading, encoding and counting one value of one table's column
_BYTES_PER_VALUE_GUESS = 4  # a CSV value and its separator, when the rows are not announced


def count_estimate(plan: Any, data: DataSize) -> Estimate:
    """Admission's estimate of reading and counting the data (issue 35): the rows announced
    (else the bytes over the columns), every plan column decoded, every table counted. Held
    by the read's own limits (MAX_ROWS, MAX_DATA_MB), checked again while reading."""
    columns = len(plan.schema.columns) if plan is not None else (data.columns or 1)
    rows = data.rows
    if rows is None and data.bytes is not None:
        rows = data.bytes // (_BYTES_PER_VALUE_GUESS * max(data.columns or columns, 1))
    rows = rows or 0
    tables = len(plan.tables) + len(plan.invariants) if plan is not None else 1
    work = rows * columns * _COUNT_NS_PER_VALUE + rows * tables * _COUNT_NS_PER_VALUE
    memory = rows * columns * DECODED_BYTES_PER_VALUE
    return Estimate("count", work, memory, "MAX_DATA_MB", f"{rows:,} rows", data_bound=True)


register("count", count_estimate)
