"""Delimited text (CSV, TSV): the registry's entry points over `data.csv_file`, which sniffs the
encoding, delimiter and header and lets pyarrow read the rest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dprelease.data.csv_file import csv_layout, read_csv
from dprelease.data.formats.base import Described, ReadRequest

if TYPE_CHECKING:
    import pyarrow as pa

    from dprelease.data.size_limits import SizeLimits

TAB_SUFFIX = ".tsv"  # a URI is read by Spark without sniffing: the suffix says TAB


def read_table(request: ReadRequest) -> pa.Table:
    return read_csv(request.source, request.head, request.where, request.columns, request.numeric)


def describe(path: Path, head: bytes, where: str, limits: SizeLimits) -> Described:
    """Encodings, delimiter and header, sniffed from the first lines as `read_data` does."""
    encodings, delimiter, header = csv_layout(head, where)
    return Described(tuple(header), encodings=encodings, delimiter=delimiter)


def remote_delimiter(uri: str) -> str:
    return "\t" if Path(uri.rstrip("/")).suffix.lower() == TAB_SUFFIX else ","
