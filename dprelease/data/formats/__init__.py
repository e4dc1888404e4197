"""The data file formats: one registered `Reader` per format, asked by everything that names one.

A reader is a name (a `DataSource.fmt`), a label for messages, the suffixes it reads, how to
recognise its content from the first bytes, the engines that read it natively, and the module
that reads it. Every reader module has the same functions (`base.py` lists them):
`read_table` (the whole file within the size limits, as `read_data` returns it), `describe`
(columns and rows from the header or metadata, no record read), and, when no engine reads the
format natively, `batches` (record batches within the memory limit); a reader with declared
metadata (value and variable labels) also has `declared`.

Nothing outside this package names a format's suffix (`tests/unit/data/test_formats.py`
greps the package): the CLI's help, the dashboard's uploaders, `read_data`'s detection and the
engines ask here. This module imports nothing heavy (the CLI's parser builds its help from
it before any command runs); the reader modules are imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from dprelease.errors import DataError


def _zip(head: bytes) -> bool:
    return head.startswith(b"PK\x03\x04")


def _parquet(head: bytes) -> bool:
    return head.startswith(b"PAR1")


def _stata(head: bytes) -> bool:
    """Stata 13+ (formats 117-119) start with a tag; 8-12 (113-115) with the version byte,
    the byte order (1 or 2) and a file type of 1."""
    if head.startswith(b"<stata_dta>"):
        return True
    return len(head) > 2 and 0x66 <= head[0] <= 0x73 and head[1] in (1, 2) and head[2] == 1


def _spss(head: bytes) -> bool:
    return head.startswith((b"$FL2", b"$FL3"))  # .sav and compressed .zsav


_SAS7BDAT_MAGIC = bytes.fromhex("000000000000000000000000c2ea8160b31411cfbd92080009c7318c181f1011")


def _sas7bdat(head: bytes) -> bool:
    return head[:32] == _SAS7BDAT_MAGIC


def _xport(head: bytes) -> bool:
    return head.startswith(b"HEADER RECORD*******LIB")  # LIBRARY (v5) or LIBV8 (v8)


@dataclass(frozen=True)
class Reader:
    """One data file format: what the rest of the code asks of it."""

    name: str  # DataSource.fmt
    label: str  # messages: "a Stata file"
    suffixes: tuple[str, ...]  # lowercase, with the dot; the first is the usual one
    module: str  # the reader module (imported on first use)
    signature: Callable[[bytes], bool] | None = None  # None: text, recognised by exclusion
    every_engine: bool = False  # every engine reads it; else only one that `reads_every_format`
    whole: bool = False  # read whole, once, on every engine (no record batches)
    declares_metadata: bool = False  # value and variable labels: the producer's codebook

    def implementation(self) -> ModuleType:
        return importlib.import_module(self.module)


READERS: tuple[Reader, ...] = (
    Reader("csv", "text (CSV)", (".csv", ".tsv", ".txt"), f"{__name__}.text", every_engine=True),
    Reader(
        "parquet",
        "a Parquet file",
        (".parquet", ".pq"),
        f"{__name__}.parquet",
        _parquet,
        every_engine=True,
    ),
    Reader("excel", "an Excel/zip file", (".xlsx",), f"{__name__}.workbook", _zip, whole=True),
    Reader("stata", "a Stata file", (".dta",), f"{__name__}.stata", _stata, declares_metadata=True),
    Reader(
        "spss", "an SPSS file", (".sav", ".zsav"), f"{__name__}.spss", _spss, declares_metadata=True
    ),
    Reader(
        "sas7bdat",
        "a SAS data set",
        (".sas7bdat",),
        f"{__name__}.sas",
        _sas7bdat,
        declares_metadata=True,
    ),
    Reader(
        "xport",
        "a SAS transport file",
        (".xpt",),
        f"{__name__}.xport",
        _xport,
        declares_metadata=True,
    ),
)
"""The registry: adding a format is one module and one line here."""

FORMAT_NAMES = "CSV, Parquet, Excel, Stata, SPSS or SAS"
"""The formats in words, for help texts (a test checks it names every reader's family)."""

_BY_NAME = {reader.name: reader for reader in READERS}
_BY_SUFFIX = {suffix: reader for reader in READERS for suffix in reader.suffixes}


def reader(name: str) -> Reader:
    """The reader of a `DataSource.fmt`."""
    return _BY_NAME[name]


def for_suffix(suffix: str) -> Reader | None:
    """The reader of a file suffix (any case), or None when no reader reads it."""
    return _BY_SUFFIX.get(suffix.lower())


def for_content(head: bytes) -> Reader | None:
    """The binary format the first bytes show, or None (text, or unknown)."""
    return next((r for r in READERS if r.signature is not None and r.signature(head)), None)


def text_reader() -> Reader:
    """The reader of content without a binary signature."""
    return next(r for r in READERS if r.signature is None)


def suffixes() -> tuple[str, ...]:
    return tuple(_BY_SUFFIX)


def allowed() -> str:
    """'.csv, .tsv, …, .sas7bdat or .xpt': what messages say is allowed."""
    names = suffixes()
    return f"{', '.join(names[:-1])} or {names[-1]}"


def upload_types() -> list[str]:
    """The suffixes without the dot, as Streamlit's uploader takes them."""
    return [suffix.lstrip(".") for suffix in suffixes()]


def codebook_types() -> list[str]:
    """A codebook (the dashboard's import of a domain) is comma-separated text."""
    return [text_reader().suffixes[0].lstrip(".")]


def part_file(path: Path) -> bool:
    """A part of a folder data set (as Spark and Hive write tables): a Parquet file."""
    found = for_suffix(path.suffix)
    return found is not None and found.name == "parquet"


def remote_text(uri: str) -> bool:
    """A URI (read by Spark only) that names delimited text; anything else is Parquet."""
    found = for_suffix(Path(uri.rstrip("/")).suffix)
    return found is not None and found.signature is None


_OLD_EXCEL = b"\xd0\xcf\x11\xe0"  # OLE2: an .xls workbook (or an old Office file)


def detect(head: bytes, name: str, where: str) -> Reader:
    """The reader from the name's suffix, refusing content that does not match it (a file
    without a suffix is read as what its content shows, text by default)."""
    if not head.strip():
        raise DataError(f"{where} is empty; give a file with a header and rows.")
    shown = for_content(head)
    if shown is None and head.startswith(_OLD_EXCEL):
        raise DataError(f"{where} is an old Excel .xls file; save it as .xlsx or CSV.")
    suffix = Path(name).suffix.lower()
    if not suffix:
        return shown or text_reader()
    found = for_suffix(suffix)
    if found is None:
        named = where[:1].lower() + where[1:]
        raise DataError(f"Unsupported data file type {suffix!r} ({named}); use {allowed()}.")
    if found is not shown and (shown is not None or found.signature is not None):
        actual = "text" if shown is None else shown.label
        raise DataError(
            f"{where} has the extension {suffix} but its content is {actual}; give the file "
            f"the extension that matches its format ({allowed()})."
        )
    if (
        found.signature is None
        and b"\x00" in head
        and not head.startswith((b"\xff\xfe", b"\xfe\xff"))
    ):
        raise DataError(
            f"{where} contains NUL bytes, so it is not CSV text (UTF-16 needs a byte-order "
            "mark); save it as UTF-8 CSV."
        )
    return found
