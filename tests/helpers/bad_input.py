"""Helpers shared by the tests (moved from test_bad_input.py)."""

from __future__ import annotations

import io
import random
import struct
import zipfile
from pathlib import Path

import openpyxl

ROOT = Path(__file__).resolve().parents[2]


COLUMNS = (
    "columns:\n"
    "  sex: {kind: categorical, domain: [F, M]}\n"
    "  age: {kind: numeric, bins: [0, 18, 65, 120]}\n"
)


TABLES = "tables: [{name: sex, by: [sex]}, {name: age_by_sex, by: [age, sex]}]\n"


PURE = "budget: {accounting: pure, epsilon: 1}\n"


GOOD_DATA = b"sex,age\nF,30\nM,70\nF,12\n"


SHEET = "xl/worksheets/sheet1.xml"


BOMB_BYTES = 250 << 20  # inflated size of the zip bomb's sheet; the file itself is ~250 KB


def write_sheet(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in (("sex", "age"), ("F", 30), ("M", 70)):
        sheet.append(row)
    book.save(path)


def zip_bomb(path: Path, lie: bool = False) -> None:
    """A real workbook whose sheet XML inflates to BOMB_BYTES (written in chunks, at test time).

    With `lie`, the zip's headers claim the sheet is 1 KB (the CRC check must then refuse it).
    """
    honest = io.BytesIO()
    write_sheet(honest)
    with zipfile.ZipFile(honest) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            if item.filename != SHEET:
                out.writestr(item, source.read(item))
        with out.open(SHEET, "w") as sheet:
            sheet.write(
                b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            )
            sheet.write(b"<sheetData>")
            chunk = b" " * (1 << 20)
            for _ in range(BOMB_BYTES >> 20):
                sheet.write(chunk)
            sheet.write(b"</sheetData></worksheet>")
    if lie:
        shrink_declared_size(path, SHEET.encode(), 1024)


def shrink_declared_size(path: Path, name: bytes, size: int) -> None:
    """Overwrite the uncompressed size of `name` in its local and central zip headers."""
    data = bytearray(path.read_bytes())
    local = data.find(b"PK\x03\x04")
    while local != -1:
        name_length = struct.unpack_from("<H", data, local + 26)[0]
        if data[local + 30 : local + 30 + name_length] == name:
            struct.pack_into("<I", data, local + 22, size)
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_length] == name:
            struct.pack_into("<I", data, central + 24, size)
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def random_bytes(seed: int, size: int, low: int = 0) -> bytes:
    generator = random.Random(seed)
    return bytes(generator.randrange(low, 256) for _ in range(size))


CITY_ROWS = "city\nZürich\nGenève\nNeuchâtel\n"


HIERARCHY = "budget: {accounting: pure, epsilon: 1}\ntables: [{name: c, by: [county]}]\n"
