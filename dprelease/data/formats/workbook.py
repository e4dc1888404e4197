"""Excel workbooks: the registry's entry points over `data.excel` (read whole, once, on every
engine: at most 200 MB unpacked, refused from the sheet's XML before openpyxl decodes it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dprelease.data.excel import read_excel
from dprelease.data.formats.base import Described, ReadRequest

if TYPE_CHECKING:
    import pyarrow as pa

    from dprelease.data.size_limits import SizeLimits


def read_table(request: ReadRequest) -> pa.Table:
    return read_excel(
        request.source, request.where, request.columns, request.numeric, request.limits
    )


def describe(path: Path, head: bytes, where: str, limits: SizeLimits) -> Described:
    """Nothing before the one whole read: the header row lies inside the zip's sheet XML."""
    return Described(())
