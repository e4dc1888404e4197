"""Reading, encoding and counting confidential data (dprelease.data.read, dprelease.data.count)."""

from __future__ import annotations

import io
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.data import excel
from dprelease.data.count import EncodedData, TrueCounts, count, encode, load_data, read_data
from dprelease.errors import DataError
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_plan
from dprelease.strategy.counted import counted_tables

SECRET = "SECRET42"  # a record value that must never appear in a message


def make_plan(
    columns: dict[str, Any], tables: list[dict[str, Any]], unit: dict[str, Any] | None = None
) -> Plan:
    raw: dict[str, Any] = {
        "columns": columns,
        "tables": tables,
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }
    if unit is not None:
        raw["unit"] = unit
    return parse_plan(raw)


def texts(table: pa.Table, name: str) -> list[Any]:
    return table.column(name).to_pylist()


def one_table_counts(csv: str, columns: dict[str, Any], by: list[str]) -> list[int]:
    plan = make_plan(columns, [{"name": "t", "by": by}])
    return count(load_data(csv.encode(), plan, filename="d.csv"), plan).counts["t"].tolist()


# --- encoding onto domains ---------------------------------------------------------------------


def test_text_domain_keeps_leading_zeros() -> None:
    csv = "state\n01\n1\n01\n02\n2.0\n"
    assert one_table_counts(csv, {"state": {"domain": ["01", "02"]}}, ["state"]) == [2, 1]


def test_numeric_domain_matches_by_value() -> None:
    csv = "n\n1\n1.0\n01\n2\n 2\n3\nx\n\n"
    assert one_table_counts(csv, {"n": {"domain": [1, 2]}}, ["n"]) == [3, 2]


def test_other_label_and_report() -> None:
    plan = make_plan(
        {"race": {"domain": ["A", "B", "Other"], "other": "Other"}},
        [{"name": "t", "by": ["race"]}],
    )
    encoded = load_data(b"race\nA\nC\n\nOther\nB\nA\n", plan, filename="d.csv")
    assert encoded.codes["race"].tolist() == [0, 2, 2, 2, 1, 0]
    report = encoded.report.columns[0]
    # 'C' and '' go to other; the literal 'Other' is in the domain, not mapped.
    assert (report.rows, report.rows_to_other, report.rows_left_out) == (6, 2, 0)
    assert report.rows_in_domain == 4
    assert count(encoded, plan).counts["t"].tolist() == [2, 1, 3]


def test_values_outside_domain_are_left_out_of_that_table_only() -> None:
    plan = make_plan(
        {"sex": {"domain": ["F", "M"]}, "race": {"domain": ["A", "B"]}},
        [
            {"name": "sex", "by": ["sex"]},
            {"name": "race", "by": ["race"]},
            {"name": "both", "by": ["sex", "race"]},
            {"name": "total", "by": []},
        ],
    )
    csv = b"sex,race\nF,A\nM,Z\nX,B\nF,B\n,A\n"
    encoded = load_data(csv, plan, filename="d.csv")
    counts = count(encoded, plan).counts
    assert counts["sex"].tolist() == [2, 1]
    assert counts["race"].tolist() == [2, 2]
    assert counts["both"].tolist() == [1, 1, 0, 0]
    assert counts["total"].tolist() == [5]
    sex, race = encoded.report.columns
    assert (sex.rows_left_out, race.rows_left_out, sex.rows_to_other) == (2, 1, 0)


def test_bins_half_open_last_closed_clamped_nan_left_out() -> None:
    values = ["0", "17.9", "18", "64.99", "65", "120", "-5", "130", "inf", "-inf", "NaN", "", "x"]
    plan = make_plan(
        {"age": {"kind": "numeric", "bins": [0, 18, 65, 120]}}, [{"name": "t", "by": ["age"]}]
    )
    encoded = load_data(("age\n" + "\n".join(values) + "\n").encode(), plan, filename="a.csv")
    assert encoded.codes["age"].tolist() == [0, 0, 1, 1, 2, 2, 0, 2, 2, 0, -1, -1, -1]
    report = encoded.report.columns[0]
    assert (report.rows_clamped, report.rows_left_out, report.rows_to_other) == (4, 3, 0)
    assert count(encoded, plan).counts["t"].tolist() == [4, 2, 4]


def test_numeric_column_with_text_falls_back_to_parsing_each_value() -> None:
    table = read_data(b"v,w\n12,a\nabc,b\n,c\n1e2,d\n", filename="d.csv", numeric=["v"])
    assert table.column("v").type == pa.float64()
    assert np.array_equal(
        np.array(table.column("v").to_pylist(), dtype=float),
        [12.0, np.nan, np.nan, 100.0],
        equal_nan=True,
    )
    assert texts(table, "w") == ["a", "b", "c", "d"]


def test_text_is_read_exactly_as_written() -> None:
    table = read_data(b'a,b\n01,NA\n,null\n" x ",1.0\n', filename="d.csv")
    assert texts(table, "a") == ["01", "", " x "]
    assert texts(table, "b") == ["NA", "null", "1.0"]
    assert pa.types.is_dictionary(table.column("a").type)


def test_columns_are_read_in_the_order_asked_and_only_those() -> None:
    table = read_data(b"a,b,c\n1,2,3\n", filename="d.csv", columns=["c", "a"])
    assert table.column_names == ["c", "a"]


def test_domain_order_is_c_order_last_column_fastest() -> None:
    columns = {"sex": {"domain": ["M", "F"]}, "race": {"domain": ["C", "A", "B"]}}
    csv = "sex,race\nM,A\nF,B\nF,B\nF,C\nM,C\nM,C\nM,C\n"
    plan = make_plan(columns, [{"name": "t", "by": ["sex", "race"]}])
    counts = count(load_data(csv.encode(), plan, filename="d.csv"), plan).counts["t"]
    labels = list(plan.table("t").cell_labels(plan.schema))
    assert dict(zip(labels, counts.tolist(), strict=True)) == {
        ("M", "C"): 3,
        ("M", "A"): 1,
        ("M", "B"): 0,
        ("F", "C"): 1,
        ("F", "A"): 0,
        ("F", "B"): 2,
    }
    assert counts.dtype == np.int64 and counts.tolist() == [3, 1, 0, 1, 0, 2]


def test_missing_values_from_parquet_nulls_go_to_other_or_are_left_out(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"a": ["x", None, "y"], "b": ["x", None, "q"]}), path)
    plan = make_plan(
        {"a": {"domain": ["x", "y", "?"], "other": "?"}, "b": {"domain": ["x", "y"]}},
        [{"name": "a", "by": ["a"]}, {"name": "b", "by": ["b"]}],
    )
    encoded = load_data(path, plan)
    assert encoded.codes["a"].tolist() == [0, 2, 1]
    assert encoded.codes["b"].tolist() == [0, -1, -1]
    assert [c.rows_to_other for c in encoded.report.columns] == [1, 0]


def test_report_lines_for_the_data_holder() -> None:
    plan = make_plan(
        {
            "s": {"domain": ["a", "b", "o"], "other": "o"},
            "n": {"kind": "numeric", "bins": [0, 10]},
            "k": {"domain": ["x"]},
        },
        [{"name": "t", "by": ["s", "n", "k"]}],
        unit={"kind": "id", "column": "id", "max_rows": 2},
    )
    csv = b"id,s,n,k\n1,a,5,x\n1,a,5,x\n1,a,5,x\n2,z,,x\n3,b,50,x\n"
    report = load_data(csv, plan, filename="d.csv").report
    assert report.lines() == (
        "5 rows read, 1 dropped by the unit cap (max_rows per unit)",
        "column 's': 1 row sent to the other label",
        "column 'n': 1 row left out (outside the domain or missing), "
        "1 row clamped into the first/last bin",
    )


def test_warning_for_a_column_with_no_value_in_its_domain() -> None:
    plan = make_plan({"s": {"domain": ["01", "02"]}}, [{"name": "t", "by": ["s"]}])
    encoded = load_data(b"s\n1\n2\n", plan, filename="d.csv")
    (warning,) = encoded.report.warnings
    assert "'s'" in warning and "left out" in warning
    assert load_data(b"s\n01\n2\n", plan, filename="d.csv").report.warnings == ()


def test_plan_with_only_the_grand_total_reads_no_column() -> None:
    plan = make_plan({"s": {"domain": ["a"]}}, [{"name": "total", "by": []}])
    encoded = load_data(b"x,y\n1,2\n3,4\n5,6\n", plan, filename="d.csv")
    assert dict(encoded.codes) == {}
    assert count(encoded, plan).counts["total"].tolist() == [3]


# --- counting against a slow reference ------------------------------------------------------


def reference_counts(rows: list[dict[str, str]], plan: Plan) -> dict[str, list[int]]:
    """Pure-Python counts: text domains, optional other label, rows left out per table."""

    def label(name: str, value: str) -> str | None:
        column = plan.schema[name]
        labels = column.labels
        if value in labels:
            return value
        other = getattr(column, "other", None)
        return None if other is None else str(other)

    counts = {}
    for spec in counted_tables(plan):  # the tables, and any union strategy: auto measures
        seen = Counter(
            tuple(label(n, row[n]) for n in spec.by)
            for row in rows
            if all(label(n, row[n]) is not None for n in spec.by)
        )
        counts[spec.name] = [seen[cell] for cell in spec.cell_labels(plan.schema)]
    return counts


def random_case(rng: np.random.Generator) -> tuple[Plan, list[dict[str, str]]]:
    columns: dict[str, Any] = {}
    for j in range(4):
        size = int(rng.integers(1, 5))
        column: dict[str, Any] = {"domain": [f"v{j}{k}" for k in range(size)]}
        if rng.random() < 0.4:
            column["other"] = column["domain"][-1]
        columns[f"c{j}"] = column
    names = list(columns)
    tables = []
    for t in range(int(rng.integers(1, 6))):
        k = int(rng.integers(0, 4))
        by = [str(n) for n in rng.choice(names, size=k, replace=False)]
        tables.append({"name": f"t{t}", "by": by})
    plan = make_plan(columns, tables)
    rows = [
        {n: str(rng.choice([*columns[n]["domain"], "zz", ""])) for n in names}
        for _ in range(int(rng.integers(1, 60)))
    ]
    return plan, rows


def to_csv(rows: list[dict[str, str]]) -> bytes:
    names = list(rows[0])
    lines = [",".join(names)] + [",".join(row[n] for n in names) for row in rows]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("seed", range(25))
def test_counts_match_a_slow_reference(seed: int) -> None:
    plan, rows = random_case(np.random.default_rng(seed))
    truth = count(load_data(to_csv(rows), plan, filename="d.csv"), plan)
    assert {k: v.tolist() for k, v in truth.counts.items()} == reference_counts(rows, plan)
    for spec in plan.tables:
        assert len(truth.counts[spec.name]) == spec.cells(plan.schema)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_counts_match_the_reference_property(seed: int) -> None:
    plan, rows = random_case(np.random.default_rng(seed))
    truth = count(load_data(to_csv(rows), plan, filename="d.csv"), plan)
    assert {k: v.tolist() for k, v in truth.counts.items()} == reference_counts(rows, plan)


def test_true_counts_and_encoded_data_hide_their_values() -> None:
    plan = make_plan({"s": {"domain": ["a", "b"]}}, [{"name": "by_s", "by": ["s"]}])
    encoded = load_data(b"s\n" + b"a\n" * 987 + b"b\n" * 654, plan, filename="d.csv")
    truth = count(encoded, plan)
    assert isinstance(truth, TrueCounts)
    for text in (repr(truth), str(truth), repr(encoded)):
        assert "987" not in text and "654" not in text
    assert "by_s" in repr(truth)
    with pytest.raises(ValueError):
        truth.counts["by_s"][0] = 1  # read-only


# --- unit capping ------------------------------------------------------------------------------


def capped(seed: int, max_rows: int = 2) -> tuple[np.ndarray, EncodedData, list[str]]:
    ids = [f"h{i % 7}" for i in range(40)] + ["solo"]
    csv = "hh,row\n" + "".join(f"{h},{r}\n" for r, h in enumerate(ids))
    plan = make_plan(
        {"row": {"domain": {"range": [0, len(ids) - 1]}}},
        [{"name": "rows", "by": ["row"]}],
        unit={"kind": "id", "column": "hh", "max_rows": max_rows},
    )
    encoded = load_data(csv.encode(), plan, filename="d.csv", rng=np.random.default_rng(seed))
    return encoded.codes["row"], encoded, ids


def test_unit_cap_keeps_at_most_max_rows_per_id() -> None:
    kept_rows, encoded, ids = capped(seed=1)
    per_id = Counter(ids[r] for r in kept_rows)
    assert max(per_id.values()) <= 2
    expected = sum(min(n, 2) for n in Counter(ids).values())
    assert len(kept_rows) == expected == encoded.rows == 15
    assert encoded.report.rows_read == 41
    assert encoded.report.rows_dropped_by_unit_cap == 41 - 15


def test_unit_cap_choice_depends_on_the_rng() -> None:
    choices = {tuple(sorted(capped(seed)[0].tolist())) for seed in range(6)}
    assert len(choices) > 1
    assert np.array_equal(capped(3)[0], capped(3)[0])


def test_unit_cap_does_nothing_when_no_id_exceeds_it() -> None:
    kept_rows, encoded, _ = capped(seed=0, max_rows=10)
    assert kept_rows.tolist() == list(range(41))
    assert encoded.report.rows_dropped_by_unit_cap == 0


# --- delimiters and encodings -----------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiter_detection(delimiter: str) -> None:
    rows = [["name", "note", "n"], ["a", "x y", "1"], ["b", "z", "2"]]
    data = "\n".join(delimiter.join(r) for r in rows).encode()
    table = read_data(data, filename="d.txt")
    assert table.column_names == ["name", "note", "n"]
    assert texts(table, "note") == ["x y", "z"]


def test_semicolon_file_with_decimal_commas_and_quoted_commas() -> None:
    table = read_data(b'a;b\n1,5;"x, y"\n2,0;z\n', filename="d.csv")
    assert table.column_names == ["a", "b"]
    assert texts(table, "a") == ["1,5", "2,0"]
    assert texts(table, "b") == ["x, y", "z"]


def test_quoted_newline_stays_in_the_value() -> None:
    table = read_data(b'a,b\n"two\nlines",1\nx,2\n', filename="d.csv")
    assert texts(table, "a") == ["two\nlines", "x"]


def test_single_column_file() -> None:
    assert texts(read_data(b"s\nF\nM\n", filename="d.csv"), "s") == ["F", "M"]


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [
        ("utf-8", b""),
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
    ],
)
def test_unicode_encodings(encoding: str, prefix: bytes) -> None:
    data = prefix + "név;ville\nZoë;Zürich\nJosé;Sète\n".encode(encoding)
    table = read_data(data, filename="d.csv")
    assert table.column_names == ["név", "ville"]  # no BOM glued to the first name
    assert texts(table, "név") == ["Zoë", "José"]
    assert texts(table, "ville") == ["Zürich", "Sète"]


def test_latin1_file() -> None:
    data = "name,city\nJosé,Zürich\nRené,Orléans\n".encode("latin-1")
    table = read_data(data, filename="d.csv")
    assert texts(table, "name") == ["José", "René"]
    assert texts(table, "city") == ["Zürich", "Orléans"]


def test_latin1_bytes_after_the_sniffed_sample_are_retried(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    body = b"a,b\n" + b"plain,1\n" * 20_000 + "Zürich,€\n".encode("cp1252")
    path.write_bytes(body)
    table = read_data(path, columns=["a", "b"])
    assert texts(table, "a")[-1] == "Zürich"
    assert texts(table, "b")[-1] == "€"
    assert table.num_rows == 20_001


def test_bytes_undefined_in_cp1252_fall_back_to_latin1() -> None:
    table = read_data(b"a\nx\x81y\n", filename="d.csv")
    assert texts(table, "a") == ["x\x81y"]


def test_path_source_and_big_file_sniffing(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("a\tb\n" + "".join(f"{i}\t{i % 3}\n" for i in range(30_000)))
    table = read_data(path, numeric=["a"])
    assert table.num_rows == 30_000 and table.column("a").type == pa.float64()
    assert texts(table, "b")[:4] == ["0", "1", "2", "0"]


# --- Parquet and Excel -------------------------------------------------------------------------


def test_parquet_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    source = pa.table(
        {"s": ["01", "1", ""], "i": [1, 2, None], "f": [1.5, None, 3.0], "k": [7, 8, 9]}
    )
    pq.write_table(source, path)
    table = read_data(path, columns=["s", "i", "f"], numeric=["f"])
    assert table.column_names == ["s", "i", "f"]
    assert texts(table, "s") == ["01", "1", ""]
    assert texts(table, "i") == ["1", "2", None]
    assert np.array_equal(
        np.array(texts(table, "f"), dtype=float), [1.5, np.nan, 3.0], equal_nan=True
    )
    buffer = io.BytesIO()
    pq.write_table(source, buffer)
    assert read_data(buffer.getvalue(), filename="up.parquet").num_rows == 3
    assert read_data(buffer.getvalue()).num_rows == 3  # recognised by its signature


def write_xlsx(path: Path, rows: list[list[Any]]) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    book.save(path)


def test_excel_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "d.xlsx"
    write_xlsx(
        path,
        [
            ["state", "age", "flag", "x"],
            ["01", 3, True, 2.5],
            ["02", 40.0, False, None],
            [None, None, None, None],
            ["06", "", None, "7"],
        ],
    )
    table = read_data(path, numeric=["age"])
    assert table.column_names == ["state", "age", "flag", "x"]
    assert texts(table, "state") == ["01", "02", "06"]
    assert texts(table, "flag") == ["TRUE", "FALSE", ""]
    assert texts(table, "x") == ["2.5", "", "7"]
    ages = np.array(texts(table, "age"), dtype=float)
    assert np.array_equal(ages, [3.0, 40.0, np.nan], equal_nan=True)
    assert read_data(path.read_bytes(), filename="d.xlsx", columns=["x"]).num_rows == 3


def test_excel_values_beyond_the_header_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.xlsx"
    write_xlsx(path, [["a", "b"], ["1", "2"], ["3", "4", SECRET]])
    with pytest.raises(DataError, match="Row 3") as error:
        read_data(path)
    assert SECRET not in str(error.value)


def test_excel_zip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.xlsx"
    write_xlsx(path, [["a"], ["1"]])
    monkeypatch.setattr(excel, "MAX_EXCEL_BYTES", 1_000)
    with pytest.raises(DataError, match="unpacks to more than"):
        read_data(path)


# --- errors: one line, no record values ---------------------------------------------------------


def data_error(source: Any, filename: str | None = "d.csv", **options: Any) -> str:
    with pytest.raises(DataError) as error:
        read_data(source, filename=filename, **options)
    message = str(error.value)
    assert "\n" not in message
    assert SECRET not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize("content", [b"", b"   \n\n", b"\xef\xbb\xbf"])
def test_empty_file(content: bytes) -> None:
    assert "empty" in data_error(content)


def test_header_only() -> None:
    assert "no rows" in data_error(b"a,b\n")


def test_ragged_rows_give_the_line_number_without_values() -> None:
    message = data_error(f"a,b\n1,2\n3,{SECRET},5\n".encode())
    assert message.startswith("Line 3 of the data has 3 fields but the header has 2")


def test_ragged_row_far_into_the_file(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b\n" + "1,2\n" * 50_000 + f"{SECRET}\n" + "1,2\n" * 10)
    assert data_error(path, filename=None).startswith("Line 50002 of the data has 1 field ")


def test_duplicate_column_names() -> None:
    message = data_error(f"a,b,a\n1,{SECRET},3\n".encode())
    assert "duplicate column names (columns 1 and 3 " in message


def test_unknown_column_suggests_a_close_name() -> None:
    message = data_error(b"Age,sex\n3,F\n", columns=["age"])
    assert "no column 'age'" in message and "Did you mean 'Age'?" in message


def test_plan_column_missing_from_the_data() -> None:
    plan = make_plan({"raec": {"domain": ["A"]}}, [{"name": "t", "by": ["raec"]}])
    with pytest.raises(DataError) as error:
        load_data(b"race,sex\nA,F\n", plan, filename="d.csv")
    assert str(error.value) == (  # the file's names may be a record's values: never quoted
        "The data has no column 'raec' that the plan uses, and none of its 2 column names "
        "matches the plan; the first line of the file must be the column names. A column name "
        "in the file is close to 'raec': check the spelling."
    )
    with pytest.raises(DataError, match="that the plan uses"):
        encode(pa.table({"sex": ["F"]}), plan)


@pytest.mark.parametrize(
    ("content", "name", "expected"),
    [
        (b"PK\x03\x04" + b"\x00" * 40, "d.csv", "content is an Excel/zip file"),
        (b"PAR1" + b"\x00" * 40, "d.csv", "content is a Parquet file"),
        (b"a,b\n1,2\n", "d.parquet", "content is text"),
        (b"a,b\n1,2\n", "d.xlsx", "content is text"),
        (b"PAR1garbage", "d.parquet", "not a readable Parquet file"),
        (b"PK\x03\x04garbage", "d.xlsx", "not a readable .xlsx file"),
        (b"a,b\n1,\x00\x00\n", "d.csv", "NUL bytes"),
        (b"\xd0\xcf\x11\xe0rest", "d.xls", "old Excel .xls"),
        (b'{"a": 1}', "d.json", "Unsupported data file type '.json'"),
    ],
)
def test_wrong_or_unreadable_content(content: bytes, name: str, expected: str) -> None:
    assert expected in data_error(content, filename=name)


def test_missing_file(tmp_path: Path) -> None:
    assert "does not exist" in data_error(tmp_path / "nope.csv", filename=None)


def test_loading_csv_does_not_import_pandas() -> None:
    code = (
        "import sys\n"
        "from dprelease.data.count import load_data, count\n"
        "from dprelease.plan.parse import parse_plan\n"
        "plan = parse_plan({'columns': {'s': {'domain': ['a']}, 'n': {'bins': [0, 1]}},\n"
        "    'tables': [{'name': 't', 'by': ['s', 'n']}],\n"
        "    'budget': {'epsilon': 1, 'delta': 1e-9}})\n"
        "count(load_data(b's,n\\na,0.5\\n', plan, filename='d.csv'), plan)\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
