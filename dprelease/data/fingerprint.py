"""The ledger's key of a data set: a fingerprint of its parsed records, not of its bytes nor of
how its columns are spelled (format 4 of the ledger, issue 34).

A record is one row. Each cell is hashed from its canonical value (`dprelease.data.cell_hash`:
whole columns at a time, numbers as numbers, text trimmed and NFC), without its column's
name; a row's hash is the sum of its cells' mixed hashes, mixed again, so that neither the
columns' names nor their order matter. The fingerprint is the row count and the sum of the
row hashes modulo 2^128: a sum does not depend on the order of the rows, and two
accumulators combine by adding, so a streaming reader can fingerprint record batches in any
order, in parallel, and merge the parts (`RecordFingerprint.combine`). Appending a newline,
shuffling the rows, reordering or renaming the columns, or saving the same records as Parquet
gives the same key.

One pass also gives:

- `read_key()`: the same over only the columns a plan reads (named when the accumulator is
  made), so that adding or dropping a column the plan does not read keeps an account;
- `sketch`: the 128 smallest distinct 64-bit row hashes (a bottom-k sketch), by which the
  ledger recognises near-duplicates (a few rows added or removed); the ledger keeps it only
  keyed by a secret of its own (`dprelease.ledger.sketches`);
- `legacy_key()`: the format-3 key (`fingerprint_v1`), only when asked, to find an account
  of an older ledger.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from dprelease.data.cell_hash import cell_hashes, mix
from dprelease.data.fingerprint_v1 import LegacyFingerprint

_MOD = 1 << 128
SKETCH_SIZE = 128
_ROW_A, _ROW_B = np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707344)
_SKETCH_SEED = np.uint64(0xA4093822299F31D0)


def _lane_sum(lane: np.ndarray) -> int:
    """Σ lane exactly (Python int), summing 32-bit halves so that numpy cannot wrap."""
    halves = np.ascontiguousarray(lane).view("<u4")  # low, high, low, … (no copy)
    low = int(np.add.reduce(halves[0::2], dtype=np.uint64))
    high = int(np.add.reduce(halves[1::2], dtype=np.uint64))
    return low + (high << 32)


def _bottom(values: np.ndarray, k: int = SKETCH_SIZE) -> tuple[int, ...]:
    """The k smallest distinct values (sorted)."""
    distinct = np.unique(
        np.partition(values, 4 * k)[: 4 * k + 1] if values.size > 4 * k else values
    )
    if distinct.size < k and values.size > 4 * k:  # many equal rows among the smallest:
        distinct = np.unique(values)  # look at every row
    return tuple(int(v) for v in distinct[:k])


def _merge(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(set(a) | set(b))[:SKETCH_SIZE])


def _key(tag: str, rows: int, total: int) -> str:
    text = f"dprelease-records-{tag}:{rows}:{total:032x}"
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class RecordFingerprint:
    """An order-independent fingerprint of records; combine parts with `combine` or `+`."""

    rows: int = 0
    total: int = 0  # Σ row hashes over every column, mod 2^128
    read_total: int | None = None  # the same over the read columns (None: not asked)
    sketch: tuple[int, ...] = field(default=(), repr=False)
    legacy: LegacyFingerprint | None = field(default=None, repr=False)

    def add(
        self,
        batch: pa.RecordBatch | pa.Table,
        read_columns: Sequence[str] | None = None,
        legacy: bool = False,
    ) -> RecordFingerprint:
        """This fingerprint with the rows of `batch` added (any column types). `read_columns`
        (names in the batch) also keys the columns a plan reads; `legacy` the format-3 key."""
        if batch.num_rows == 0:
            return self
        if batch.num_rows >= 2**31:
            raise ValueError("fingerprint a batch of fewer than 2^31 rows at a time")
        read_columns = _present(read_columns, batch)
        reading = set(read_columns) if read_columns is not None else set()
        sums = np.zeros(batch.num_rows, dtype=np.uint64)
        read_sums = np.zeros(batch.num_rows, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for name, hashes in zip(batch.schema.names, _column_hashes(batch), strict=True):
                sums += hashes  # a sum: the columns' order and names do not matter
                if name in reading:
                    read_sums += hashes
        total, row_a = _rows_total(sums)
        read_total = self.read_total
        if read_columns is not None:
            part, _ = _rows_total(read_sums)
            read_total = ((read_total or 0) + part) % _MOD
        old = self.legacy
        if legacy:
            old = (old or LegacyFingerprint()).add(batch)
        return RecordFingerprint(
            rows=self.rows + batch.num_rows,
            total=(self.total + total) % _MOD,
            read_total=read_total,
            sketch=_merge(self.sketch, _bottom(mix(row_a ^ _SKETCH_SEED))),
            legacy=old,
        )

    def combine(self, other: RecordFingerprint) -> RecordFingerprint:
        reads = [t for t in (self.read_total, other.read_total) if t is not None]
        legacy = self.legacy or other.legacy
        if self.legacy is not None and other.legacy is not None:
            legacy = self.legacy.combine(other.legacy)
        return RecordFingerprint(
            rows=self.rows + other.rows,
            total=(self.total + other.total) % _MOD,
            read_total=sum(reads) % _MOD if reads else None,
            sketch=_merge(self.sketch, other.sketch),
            legacy=legacy,
        )

    __add__ = combine

    def key(self) -> str:
        """The ledger key: 64 lowercase hex digits (SHA-256 of the row count and the sum)."""
        return _key("v2", self.rows, self.total)

    def read_key(self) -> str | None:
        """The key of only the columns the plan reads (None when not asked)."""
        return None if self.read_total is None else _key("v2", self.rows, self.read_total)

    def legacy_key(self) -> str | None:
        """The format-3 key (None when not asked)."""
        return None if self.legacy is None else self.legacy.key()

    @classmethod
    def of_parts(cls, parts: pa.Table) -> RecordFingerprint:
        """The sum of parts made by `fingerprint_batches` (one JSON text per part)."""
        result = cls()
        for text in parts.column("part").to_pylist():
            result = result + _part_of(json.loads(text))
        return result

    def __repr__(self) -> str:
        return f"RecordFingerprint(rows=<confidential>, key={self.key()[:12]}…)"


PARALLEL_ROWS = 100_000  # a batch this long hashes its columns on two threads
HASHING_AHEAD = 2


def _column_hashes(batch: pa.RecordBatch | pa.Table) -> Iterator[np.ndarray]:
    """Each column's cell hashes, in order; a long batch's on two threads (numpy and arrow
    release the GIL), as the machines this runs on have two cores or more. At most
    `HASHING_AHEAD` columns are hashed ahead of the caller, so a wide batch never holds every
    column's hashes at once (12 columns of 1 M rows: 96 MB). The pool is made per batch: a
    module-level one could not travel to Spark's executors with this module."""
    columns = [batch.column(index) for index in range(batch.num_columns)]
    if batch.num_rows < PARALLEL_ROWS or len(columns) < 2:
        yield from map(cell_hashes, columns)
        return
    with ThreadPoolExecutor(2, thread_name_prefix="fingerprint-columns") as pool:
        ahead: deque[Future[np.ndarray]] = deque()
        for column in columns:
            ahead.append(pool.submit(cell_hashes, column))
            if len(ahead) > HASHING_AHEAD:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


def _rows_total(sums: np.ndarray) -> tuple[int, np.ndarray]:
    """Σ of the rows' 128-bit hashes (two mixes of the sums of their cells' hashes), and the
    rows' first half."""
    row_a = mix(sums ^ _ROW_A)
    row_b = mix(sums ^ _ROW_B)
    return (_lane_sum(row_a) + (_lane_sum(row_b) << 64)) % _MOD, row_a


def _present(read_columns: Sequence[str] | None, batch: pa.RecordBatch) -> tuple[str, ...] | None:
    """The read columns, if the batch has them all under those names; else None (no read
    key: a key over fewer columns than the plan reads could merge different records)."""
    if read_columns is None or not set(read_columns) <= set(batch.schema.names):
        return None
    return tuple(read_columns)


def fingerprint_table(
    table: pa.Table,
    batch_rows: int = 1_000_000,
    read_columns: Sequence[str] | None = None,
    legacy: bool = False,
) -> RecordFingerprint:
    """The fingerprint of a whole table, batch by batch."""
    result = RecordFingerprint()
    for batch in table.to_batches(max_chunksize=batch_rows):
        result = result.add(batch, _present(read_columns, batch), legacy)
    return result


PART_SCHEMA = "part string"
"""A part's fingerprint as a row (Spark's DDL): one JSON text."""


def _part_text(part: RecordFingerprint) -> str:
    legacy = part.legacy
    return json.dumps(
        {
            "rows": part.rows,
            "total": f"{part.total:032x}",
            "read": None if part.read_total is None else f"{part.read_total:032x}",
            "sketch": [f"{v:016x}" for v in part.sketch],
            "legacy": None if legacy is None else [legacy.rows, f"{legacy.total:032x}"],
        }
    )


def _part_of(raw: dict[str, object]) -> RecordFingerprint:
    read, legacy = raw["read"], raw["legacy"]
    return RecordFingerprint(
        rows=int(str(raw["rows"])),
        total=int(str(raw["total"]), 16),
        read_total=None if read is None else int(str(read), 16),
        sketch=tuple(int(v, 16) for v in raw["sketch"]),  # type: ignore[attr-defined]
        legacy=None if legacy is None else LegacyFingerprint(int(legacy[0]), int(legacy[1], 16)),  # type: ignore[index]
    )


def fingerprint_batches(
    batches: Iterator[pa.RecordBatch],
    read_columns: Sequence[str] | None = None,
    legacy: bool = False,
) -> Iterator[pa.RecordBatch]:
    """One part's fingerprint as one row (PART_SCHEMA): for an engine that fingerprints
    where the data live (Spark's `mapInArrow`); combine the rows with `of_parts`."""
    part = RecordFingerprint()
    for batch in batches:
        read_columns = _present(read_columns, batch)
        part = part.add(batch, read_columns, legacy)
    yield pa.RecordBatch.from_arrays([pa.array([_part_text(part)], pa.string())], names=["part"])


@dataclass(frozen=True)
class Fingerprinting:
    """What a release's fingerprint covers besides every column: the plan's read columns (for
    `read_key`) and whether the format-3 key is needed (`Ledger.needs_old_keys`)."""

    read_columns: tuple[str, ...] | None = None
    legacy: bool = False

    def accumulator(self) -> FingerprintAccumulator:
        return FingerprintAccumulator(self.read_columns, self.legacy)


class FingerprintAccumulator:
    """A counting engine's per-batch hook (`engines.BatchAccumulator`): fingerprints every
    record batch it is shown, so that the ledger's key costs no second read of the data.
    `read_columns` are the plan's columns (for `read_key`); `legacy` asks the format-3 key.

    The hashing runs on a thread of its own while the engine counts the next batch (numpy and
    arrow release the GIL): on two cores the key costs little more than the count. At most
    `IN_FLIGHT` batches wait for it, so memory stays bounded."""

    IN_FLIGHT = 1

    def __init__(self, read_columns: Sequence[str] | None = None, legacy: bool = False) -> None:
        self._done = RecordFingerprint()
        self.read_columns = None if read_columns is None else tuple(read_columns)
        self.legacy = legacy
        self._pending: deque[Future[RecordFingerprint]] = deque()
        self._pool: ThreadPoolExecutor | None = None

    def __call__(self, batch: pa.RecordBatch) -> None:
        self.read_columns = _present(self.read_columns, batch)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="fingerprint")
        while len(self._pending) >= self.IN_FLIGHT:
            self._done = self._done + self._pending.popleft().result()
        part = RecordFingerprint()
        self._pending.append(self._pool.submit(part.add, batch, self.read_columns, self.legacy))

    @property
    def fingerprint(self) -> RecordFingerprint:
        """Every batch shown so far, fingerprinted (waits for the hashing thread)."""
        while self._pending:
            self._done = self._done + self._pending.popleft().result()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        return self._done

    def include(self, part: RecordFingerprint) -> None:
        """Add records fingerprinted elsewhere (an engine's executors)."""
        self._done = self._done + part

    def batches(self) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
        """`fingerprint_batches` with this accumulator's settings (for Spark's executors)."""
        read_columns, legacy = self.read_columns, self.legacy

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return fingerprint_batches(batches, read_columns, legacy)

        return run

    def __repr__(self) -> str:
        return f"FingerprintAccumulator({self._done!r})"


def with_read_columns(
    fingerprint: RecordFingerprint, table: pa.Table, read_columns: Sequence[str]
) -> RecordFingerprint:
    """A fingerprint made without the plan's columns, given its read key from `table` (kept as
    it was when `table` lacks one of them under its name)."""
    if not set(read_columns) <= set(table.column_names):
        return fingerprint
    keyed = fingerprint_table(table.select(list(read_columns)))
    return replace(fingerprint, read_total=keyed.total)
