"""Issue 25 (trust, third round), points 2, 5, 7, 8 and 10: the readers, engines and ledger key.

Each test here failed before its fix (run against the code before it):
- 2: every engine and format feeds the records' fingerprint (xlsx and Spark URIs fed nothing,
  so their releases went to the account of an empty data set), and a charged release whose
  fingerprint saw no rows, or fewer than were counted, is refused;
- 5: a data path is that file (DuckDB and Spark read `d[12].csv` as a glob);
- 7: Spark prints no record value (nor its own log) on stderr;
- 8: one-line errors instead of crashes (huge bin counts, the query's own column names in the
  data, two columns equal up to case, a statistics plan with an xlsx under a ledger);
- 10: an xlsx sheet has at most 1,048,576 rows: a bigger one is refused from its dimension.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from dprelease.cli import main
from dprelease.data.count import count, load_data
from dprelease.data.engines import count_data
from dprelease.data.fingerprint import FingerprintAccumulator, RecordFingerprint, fingerprint_table
from dprelease.data.read import read_data
from dprelease.errors import DataError, PlanError
from dprelease.ledger.store import Ledger
from dprelease.limits import MAX_RECORD_COLUMNS
from dprelease.plan.parse import load_plan, loads_plan
from helpers import ROOT
from helpers.cli import child_env
from helpers.engines import ENGINES, needs_spark

PLAN = """version: 1
columns:
  state: {kind: categorical, domain: ['01', '02', '04', '05']}
  sex: {kind: categorical, domain: [F, M, Other], other: Other}
  age: {kind: numeric, bins: [0, 18, 65, 100]}
tables:
  - {name: total, by: []}
  - {name: sex_by_age, by: [sex, age]}
  - {name: state, by: [state]}
budget: {accounting: pure, epsilon: 1}
"""


def records(rows: int = 2_000, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    states = np.array(["01", "02", "04", "05", "99", ""])
    sexes = np.array(["F", "M", "Other", "f", ""])
    ages = np.array(["0", "17", "18", "64.5", "65", "100", "-3", "", "old"])
    return pa.table(
        {
            "id": pa.array([str(i) for i in range(rows)]),
            "state": pa.array(states[rng.integers(0, len(states), rows)]),
            "sex": pa.array(sexes[rng.integers(0, len(sexes), rows)]),
            "age": pa.array(ages[rng.integers(0, len(ages), rows)]),
        }
    )


def write_xlsx(table: pa.Table, path: Path) -> Path:
    """The table as a workbook, whole numbers as numbers (as a spreadsheet holds them)."""
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet()
    sheet.append(table.column_names)
    for row in zip(*(table.column(n).to_pylist() for n in table.column_names), strict=True):
        sheet.append([int(v) if v.isdigit() and not v.startswith("0") else v for v in row])
    book.save(path)
    return path


@pytest.fixture(scope="module")
def same_records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same records as CSV, Parquet, xlsx and a folder of Parquet parts."""
    folder = tmp_path_factory.mktemp("formats")
    table = records()
    pacsv.write_csv(table, folder / "data.csv")
    pq.write_table(table, folder / "data.parquet", row_group_size=700)
    parts = folder / "parts"
    parts.mkdir()
    for i, start in enumerate(range(0, table.num_rows, 600)):
        pq.write_table(table.slice(start, 600), parts / f"part-{i:05d}.parquet")
    (parts / "_SUCCESS").write_bytes(b"")
    write_xlsx(table, folder / "data.xlsx")
    (folder / "plan.yaml").write_text(PLAN)
    return {
        "csv": folder / "data.csv",
        "parquet": folder / "data.parquet",
        "xlsx": folder / "data.xlsx",
        "parts": parts,
    }


def engine_fingerprint(location: str | Path, engine: str) -> RecordFingerprint:
    result = count_data(
        location, loads_plan(PLAN, "yaml"), engine=engine, new_accumulator=FingerprintAccumulator
    )
    assert isinstance(result.accumulator, FingerprintAccumulator)
    return result.accumulator.fingerprint


# --- 2: every engine and format feeds the fingerprint ------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_the_key_of_the_same_records_is_equal_on_every_format_and_engine(
    same_records: dict[str, Path], engine: str
) -> None:
    expected = fingerprint_table(read_data(same_records["csv"]))
    assert expected.rows == 2_000
    locations: dict[str, str | Path] = dict(same_records)
    if engine == "spark":  # and as URIs, which only Spark reads
        for kind in ("csv", "parquet", "parts"):
            locations[f"{kind} uri"] = same_records[kind].as_uri()
    for kind, location in locations.items():
        seen = engine_fingerprint(location, engine)
        assert seen.rows == expected.rows, kind
        assert seen.key() == expected.key(), kind


@pytest.mark.parametrize("fmt", ["csv", "parquet", "xlsx"])
@pytest.mark.parametrize("engine", ["arrow", "duckdb", "spark"])
def test_records_too_wide_to_fingerprint_are_refused_from_the_header(
    tmp_path: Path, fmt: str, engine: str
) -> None:
    """A ledger's key reads every column: one line of 100,000 columns took 0.9 GB and 10 s in
    Arrow's CSV reader. Beyond MAX_RECORD_COLUMNS the charged count is refused at once,
    on every engine; the uncharged count (the plan's columns only) still runs."""
    names = ["state", "sex", "age", *(f"c{i}" for i in range(MAX_RECORD_COLUMNS - 2))]
    table = pa.table(
        {n: pa.array(["01" if n == "state" else "F" if n == "sex" else "30"]) for n in names}
    )
    path = tmp_path / f"wide.{fmt}"
    if fmt == "csv":
        pacsv.write_csv(table, path)
    elif fmt == "parquet":
        pq.write_table(table, path)
    else:
        write_xlsx(table, path)
    plan = loads_plan(PLAN, "yaml")
    started = time.monotonic()
    # an xlsx names its columns only in its sheet, read whole on every engine: the reader's
    # own check refuses it (the same limit, without the --no-ledger hint)
    expected = "limited to 10,000" if fmt == "xlsx" else "at most 10,000.*--no-ledger"
    with pytest.raises(DataError, match=f"{len(names):,} columns.*{expected}"):
        count_data(path, plan, engine=engine, new_accumulator=FingerprintAccumulator)
    assert time.monotonic() - started < 5  # refused before any engine starts (Spark's JVM too)
    if fmt == "xlsx":  # a workbook is read whole, every column, charged or not
        with pytest.raises(DataError, match="limited to 10,000"):
            count_data(path, plan, engine=engine)
    elif engine != "spark":  # the uncharged count on Spark would start a JVM for one row
        assert count_data(path, plan, engine=engine).report.rows_read == 1


def ledger_release(plan: Path, data: Path, ledger: Path, out: Path, *extra: str) -> int:
    # `records` is messy on purpose: more than 1% of its rows are left out (issue 37)
    args = ["release", str(plan), "--data", str(data), "--ledger", str(ledger), "--allow-left-out"]
    return main([*args, "--out", str(out), *extra])


def test_an_xlsx_of_spent_records_is_charged_to_their_account(
    same_records: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The red team's run: with the CSV's cap spent, the same records as xlsx were released
    three more times, and an unrelated xlsx landed in the same (empty data set's) account."""
    plan, ledger = same_records["csv"].parent / "plan.yaml", tmp_path / "ledger.sqlite"
    assert ledger_release(plan, same_records["csv"], ledger, tmp_path / "a", "--cap", "1") == 0
    capsys.readouterr()
    assert ledger_release(plan, same_records["xlsx"], ledger, tmp_path / "b") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "cap" in err
    other = write_xlsx(records(50, seed=9), tmp_path / "other.xlsx")
    assert ledger_release(plan, other, ledger, tmp_path / "c") == 0
    book = Ledger(ledger)
    assert len(book.datasets()) == 2
    assert (
        book.account(fingerprint_table(read_data(other)).key()).key
        != book.account(fingerprint_table(read_data(same_records["csv"])).key()).key
    )


def charge_with(fingerprint: RecordFingerprint, tmp_path: Path) -> Ledger:
    from dprelease.accounting.allocation import allocate
    from dprelease.release.publish import Account, charged_release

    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    counts = count(load_data(plan.data_path, plan), plan)
    book = Ledger(tmp_path / "ledger.sqlite")
    account = Account(book, fingerprint)
    charged_release(plan, allocate(plan), counts, account, release_id="r1", label="test")
    return book


def test_a_release_whose_fingerprint_saw_no_rows_or_fewer_than_counted_is_refused(
    tmp_path: Path,
) -> None:
    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    whole = fingerprint_table(read_data(plan.data_path))
    short = fingerprint_table(read_data(plan.data_path).slice(0, whole.rows - 1))
    for index, seen in enumerate((RecordFingerprint(), short)):
        folder = tmp_path / str(index)
        folder.mkdir()
        with pytest.raises(DataError, match="fingerprint") as refused:
            charge_with(seen, folder)
        assert str(refused.value).count("\n") == 0
        assert Ledger(folder / "ledger.sqlite").datasets() == []  # nothing charged
    (tmp_path / "ok").mkdir()
    assert len(charge_with(whole, tmp_path / "ok").datasets()) == 1


# --- 5: a path means that file ----------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_a_data_path_is_the_file_it_names_not_a_glob(tmp_path: Path, engine: str) -> None:
    table = records(30)
    pacsv.write_csv(table.slice(0, 10), tmp_path / "d[12].csv")
    pacsv.write_csv(table.slice(10, 7), tmp_path / "d1.csv")
    pacsv.write_csv(table.slice(17, 13), tmp_path / "d2.csv")
    pq.write_table(table.slice(0, 4), tmp_path / "p?.parquet")
    pq.write_table(table.slice(4, 9), tmp_path / "p1.parquet")
    folder = tmp_path / "f*"
    folder.mkdir()
    pq.write_table(table.slice(0, 5), folder / "part-0.parquet")
    (tmp_path / "fx").mkdir()
    pq.write_table(table.slice(5, 20), tmp_path / "fx" / "part-0.parquet")
    for name, rows in (("d[12].csv", 10), ("p?.parquet", 4), ("f*", 5)):
        seen = engine_fingerprint(tmp_path / name, engine)
        assert seen.rows == rows, name
        result = count_data(tmp_path / name, loads_plan(PLAN, "yaml"), engine=engine)
        assert result.report.rows_read == rows, name


# --- 7: Spark says nothing of a record --------------------------------------------------------


@needs_spark
@pytest.mark.child_jvm
def test_spark_prints_no_record_and_no_log_of_its_own(tmp_path: Path) -> None:
    secret = "SECRETVALUE4242"
    bad = tmp_path / "bad.csv"
    bad.write_text(f'id,state,sex,age\n1,01,F,30\n2,"02,M,{secret}\n3,01,"F"x{secret},40\n')
    (tmp_path / "plan.yaml").write_text(PLAN)
    command = ["validate", str(tmp_path / "plan.yaml"), "--data", str(bad), "--engine", "spark"]
    result = subprocess.run(
        [sys.executable, "-m", "dprelease", *command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env(PATH=os.environ["PATH"], HOME=str(tmp_path)),
        timeout=300,
    )
    assert secret not in result.stderr + result.stdout
    assert result.returncode == 2, result.stderr[-3000:]
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-3000:]


# --- 8: one-line errors, not crashes -----------------------------------------------------------


@pytest.mark.parametrize(
    "bins",
    [
        "{start: 0, stop: 1e300, width: 1e-300}",
        "{start: -1e308, stop: 1e308, width: 1}",
    ],
)
def test_a_huge_number_of_bins_is_a_plan_error(bins: str, tmp_path: Path) -> None:
    text = PLAN.replace("bins: [0, 18, 65, 100]", f"bins: {bins}")
    with pytest.raises(PlanError, match="at most"):
        loads_plan(text, "yaml")
    (tmp_path / "plan.yaml").write_text(text)
    for command in ("plan", "validate"):
        assert main([command, str(tmp_path / "plan.yaml")]) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_data_columns_named_like_the_querys_own_columns_count_as_data(
    tmp_path: Path, engine: str
) -> None:
    names = ["_kept", "_g0", "_all", "_random", "_keep", "c0", "v0"]
    columns = "\n".join(f"  {n}: {{kind: categorical, domain: [a, b]}}" for n in names)
    plan = loads_plan(
        f"version: 1\ncolumns:\n{columns}\ntables:\n"
        "  - {name: t, by: [_kept, _g0]}\n  - {name: u, by: [_all, _random, _keep]}\n"
        "  - {name: w, by: [c0, v0]}\nbudget: {accounting: pure, epsilon: 1}\n",
        "yaml",
    )
    rng = np.random.default_rng(1)
    table = pa.table({n: pa.array(np.array(["a", "b"])[rng.integers(0, 2, 200)]) for n in names})
    pacsv.write_csv(table, tmp_path / "d.csv")
    pq.write_table(table, tmp_path / "d.parquet")
    expected = count(load_data(tmp_path / "d.csv", plan), plan)
    for name in ("d.csv", "d.parquet"):
        result = count_data(tmp_path / name, plan, engine=engine)
        for table_name, cells in expected.counts.items():
            np.testing.assert_array_equal(result.counts.counts[table_name], cells)


@pytest.mark.parametrize("engine", ENGINES)
def test_two_columns_equal_up_to_case_are_two_columns(tmp_path: Path, engine: str) -> None:
    plan = loads_plan(
        "version: 1\ncolumns:\n  sex: {kind: categorical, domain: [F, M]}\n"
        "  SEX: {kind: categorical, domain: [F, M]}\n"
        "tables:\n  - {name: low, by: [sex]}\n  - {name: both, by: [SEX, sex]}\n"
        "budget: {accounting: pure, epsilon: 1}\n",
        "yaml",
    )
    data = pa.table({"SEX": ["F", "M", "F"], "sex": ["M", "M", "F"]})
    pq.write_table(data, tmp_path / "case.parquet")
    pacsv.write_csv(data, tmp_path / "case.csv")
    for name in ("case.parquet", "case.csv"):
        result = count_data(tmp_path / name, plan, engine=engine)
        assert result.counts.counts["low"].tolist() == [1, 2]
        assert result.counts.counts["both"].tolist() == [1, 1, 0, 1]


STATS_PLAN = """version: 1
columns:
  sex: {kind: categorical, domain: [F, M, Other], other: Other}
  age: {kind: numeric, bins: [0, 18, 65, 100]}
tables:
  - {name: sex, by: [sex]}
  - {name: median_age, stat: {quantile: 0.5, column: age, bounds: [0, 100]}}
budget: {accounting: pure, epsilon: 1}
"""


def test_a_statistics_plan_with_an_xlsx_under_a_ledger_is_charged_to_its_records(
    same_records: dict[str, Path], tmp_path: Path
) -> None:
    plan, ledger = tmp_path / "plan.yaml", tmp_path / "ledger.sqlite"
    plan.write_text(STATS_PLAN)
    assert ledger_release(plan, same_records["xlsx"], ledger, tmp_path / "a") == 0
    assert ledger_release(plan, same_records["csv"], ledger, tmp_path / "b") == 0
    assert ledger_release(plan, same_records["parquet"], ledger, tmp_path / "c") == 0
    key = fingerprint_table(read_data(same_records["csv"])).key()
    book = Ledger(ledger)
    assert len(book.datasets()) == 1 and book.balance(key).releases == 3


# --- 10: an xlsx sheet has at most 1,048,576 rows ---------------------------------------------


def tall_xlsx(path: Path, rows: int, dimension: bool) -> Path:
    """A one-column sheet of `rows` data rows (a few hundred KB zipped)."""
    main_ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    types = (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.'
        'org/package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", types)
        archive.writestr(
            "_rels/.rels",
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship '
            f'Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        archive.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main_ns}" '
            f'xmlns:r="{rel}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>'
            "</workbook>",
        )
        archive.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship '
            f'Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        with archive.open("xl/worksheets/sheet1.xml", "w") as sheet:
            head = f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main_ns}">'
            if dimension:
                head += f'<dimension ref="A1:A{rows + 1}"/>'
            sheet.write(
                (
                    head + '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>sex</t>'
                    "</is></c></row>"
                ).encode()
            )
            step = 100_000
            for start in range(2, rows + 2, step):
                stop = min(start + step, rows + 2)
                sheet.write(
                    "".join(
                        f'<row r="{r}"><c r="A{r}"><v>1</v></c></row>' for r in range(start, stop)
                    ).encode()
                )
            sheet.write(b"</sheetData></worksheet>")
    return path


@pytest.mark.parametrize("dimension", [True, False])
def test_an_xlsx_taller_than_a_sheet_can_be_is_refused_at_once(
    tmp_path: Path, dimension: bool
) -> None:
    sheet = tall_xlsx(tmp_path / "tall.xlsx", 1_200_000, dimension)
    assert sheet.stat().st_size < 10_000_000
    started = time.perf_counter()
    with pytest.raises(DataError, match="1,048,576 rows"):
        read_data(sheet)
    assert time.perf_counter() - started < (2 if dimension else 10)
