"""What every reader module takes and gives (`formats.Reader.implementation()`):

- `read_table(request: ReadRequest) -> pa.Table`: the whole file within the size limits, as
  `read_data` returns it (numeric columns float64, every other column text);
- `describe(path, head, where, limits) -> Described`: columns and rows from the header or
  metadata, no record read (the engines' `DataSource`);
- `batches(location, where, columns, limits) -> Iterator[pa.RecordBatch]`: only in a module
  whose format no engine reads natively (the Arrow engine streams these batches);
- `declared(source, where) -> DeclaredMetadata`: only where `Reader.declares_metadata`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dprelease.data.size_limits import SizeLimits


@dataclass(frozen=True)
class ReadRequest:
    """`read_data`'s arguments once the format is known."""

    source: str | Path | bytes
    head: bytes  # the first bytes (text: to the end of the first line)
    where: str  # how messages call the file
    columns: Sequence[str] | None  # None: every column
    numeric: Collection[str]  # read as float64; every other column as text
    limits: SizeLimits


@dataclass(frozen=True)
class Described:
    """A local file as the engines see it before reading: never a record value."""

    columns: tuple[str, ...]
    rows: int | None = None  # from metadata, when the format announces it
    files: tuple[str, ...] = ()  # a folder's part files, in order
    encodings: tuple[str, ...] = ()  # text: the encodings to try, in order
    delimiter: str = ","
