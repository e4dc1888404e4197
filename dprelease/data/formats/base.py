"""What every reader module takes and gives (`formats.Reader.implementation()`): a read request,
and a source described from its header or metadata without reading a record."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

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


class FormatModule(Protocol):
    """The functions of a reader module (`batches` and `declared` only where registered)."""

    def read_table(self, request: ReadRequest) -> pa.Table: ...

    def describe(self, path: Path, head: bytes, where: str, limits: SizeLimits) -> Described: ...


class StreamingModule(FormatModule, Protocol):
    def batches(
        self, location: str, where: str, columns: Sequence[str], limits: SizeLimits
    ) -> Iterator[pa.RecordBatch]: ...
