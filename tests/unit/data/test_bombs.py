"""Decompression bombs: the size limits apply to the decoded size, read from metadata first.

Each bomb is made here: a Parquet file of very many constant rows (a few MB on disk) and an
xlsx whose cells all point at one long shared string (tens of KB zipped). Before the fix both
were decoded in full (11 GB and 4.4 GB in the red team's runs).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from dprelease.data.read import read_data
from dprelease.errors import DataError
from dprelease.limits import MAX_ROWS
from helpers import ROOT
from helpers.bombs import constant_parquet


def shared_string_bomb(path: Path, cells: int, length: int) -> Path:
    """An xlsx whose `cells` data cells all show one shared string of `length` characters."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    sheet_rows = ['<row r="1"><c r="A1" t="s"><v>0</v></c></row>']
    sheet_rows += [
        f'<row r="{r}"><c r="A{r}" t="s"><v>1</v></c></row>' for r in range(2, cells + 2)
    ]
    files = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.'
            'org/package/2006/content-types"><Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType='
            '"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName='
            '"/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument'
            '.spreadsheetml.sharedStrings+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship '
            f'Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="{rel}">'
            '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}">'
            f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/>'
            "</Relationships>"
        ),
        "xl/sharedStrings.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" count="{cells + 1}" '
            f'uniqueCount="2"><si><t>sex</t></si><si><t>{"F" * length}</t></si></sst>'
        ),
        "xl/worksheets/sheet1.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><sheetData>'
            + "".join(sheet_rows)
            + "</sheetData></worksheet>"
        ),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_parquet_row_bomb_is_refused_from_metadata_by_validate(tmp_path: Path) -> None:
    bomb = constant_parquet(tmp_path / "bomb.parquet", MAX_ROWS + 1)
    assert bomb.stat().st_size < 5_000_000  # a few MB that decode to 100 M rows
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "version: 1\ndata: bomb.parquet\ncolumns:\n  sex: {kind: categorical, domain: [F, M]}\n"
        "tables:\n  - {name: sex, by: [sex]}\nbudget: {accounting: pure, epsilon: 1}\n"
    )
    # The child's own peak (VmHWM, KB): ru_maxrss would carry over the parent's peak at the
    # fork, i.e. whatever the tests that ran before in this pytest process had used.
    code = (
        "import re, sys\nfrom pathlib import Path\nfrom dprelease.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print(re.search(r'VmHWM:\\s*(\\d+)', Path('/proc/self/status').read_text())[1])\n"
        "sys.exit(status)"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, "validate", str(plan)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    seconds = time.perf_counter() - start
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "row limit" in done.stderr and "--max-rows" in done.stderr
    assert int(done.stdout.split()[-1]) < 400_000  # KB: nothing was decoded
    assert seconds < 30


def test_parquet_decoded_bytes_count_not_bytes_on_disk(tmp_path: Path) -> None:
    bomb = constant_parquet(tmp_path / "bomb.parquet", 8_000_000)
    assert bomb.stat().st_size < 1_000_000
    # 8 M rows × 2 columns × 8 bytes = 128 MB decoded, from < 1 MB on disk
    with pytest.raises(DataError, match="decodes to at least 128 MB"):
        read_data(bomb, max_bytes=100_000_000)
    with pytest.raises(DataError, match="row limit"):
        read_data(bomb, max_rows=1_000_000)
    assert read_data(bomb, columns=["sex"], max_bytes=100_000_000).num_rows == 8_000_000


def test_xlsx_shared_string_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    bomb = shared_string_bomb(tmp_path / "bomb.xlsx", cells=2_000, length=50_000)
    assert bomb.stat().st_size < 100_000  # 100 MB of text from a few KB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DataError, match="decodes to at least 100 MB"):
        read_data(bomb, max_bytes=50_000_000)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KB
    table = read_data(bomb, max_bytes=200_000_000)  # under a higher limit it is just data
    assert table.num_rows == 2_000


def test_xlsx_rows_count_against_the_row_limit(tmp_path: Path) -> None:
    sheet = shared_string_bomb(tmp_path / "rows.xlsx", cells=500, length=1)
    with pytest.raises(DataError, match="row limit"):
        read_data(sheet, max_rows=100)
    assert read_data(sheet, max_rows=501).num_rows == 500
