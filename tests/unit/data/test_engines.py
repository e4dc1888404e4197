"""Every engine gives the in-memory path's true counts and data report (never noisy output).

The in-memory path (`load_data` + `count`) is the reference. The generated file has what
encoding must get right: values outside the domain, missing values, an `other` label, numbers
written as text, numbers clamped into the first/last bin, and (for `unit: id`) units whose
rows lie far apart, in different batches and part files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from dprelease.data.count import count, load_data
from dprelease.data.engines import arrow as arrow_engine
from dprelease.data.engines import count_data
from dprelease.data.read import SizeLimits
from dprelease.errors import DataError
from dprelease.plan.parse import load_plan
from helpers import ROOT
from helpers.engines import ENGINES, spark_available

SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"


PLAN = """version: 1
data: {data}
unit: {unit}
columns:
  state: {{kind: categorical, domain: ['01', '02', '04', '05']}}
  sex: {{kind: categorical, domain: [F, M, Other], other: Other}}
  size: {{kind: categorical, domain: {{range: [1, 5]}}}}
  age: {{kind: numeric, bins: [0, 18, 65, 100]}}
tables:
  - {{name: total, by: []}}
  - {{name: state, by: [state]}}
  - {{name: sex_by_age, by: [sex, age]}}
  - {{name: state_by_size, by: [state, size]}}
  - {{name: age, by: [age]}}
budget: {{accounting: pure, epsilon: 1}}
"""


def messy_table(rows: int, seed: int = 7) -> pa.Table:
    """Rows of four units-level and person-level columns with every kind of awkward value."""
    rng = np.random.default_rng(seed)
    unit = rng.integers(0, rows // 3, rows)
    states = np.array(["01", "02", "04", "05", "1", "", "99"])  # '1' is not '01'
    unit_state = states[rng.integers(0, len(states), rows // 3 + 1)]
    sexes = np.array(["F", "M", "Other", "f", "", "NA"])
    sizes = np.array(["1", "2", "3.0", "05", "6", "x", ""])  # numbers match by value
    ages = np.array(["0", "17", "18", "64.5", "65", "100", "-3", "250", "", "NA", "old", " 40 "])
    unit_size = sizes[rng.integers(0, len(sizes), rows // 3 + 1)]
    return pa.table(
        {
            "household": pa.array([f"H{u}" for u in unit]),
            "state": pa.array(unit_state[unit]),
            "sex": pa.array(sexes[rng.integers(0, len(sexes), rows)]),
            "size": pa.array(unit_size[unit]),
            "age": pa.array(ages[rng.integers(0, len(ages), rows)]),
        }
    )


def write_plan(folder: Path, data: str, unit: str = "{kind: row}") -> Path:
    plan = folder / "plan.yaml"
    plan.write_text(PLAN.format(data=data, unit=unit))
    return plan


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("engines")
    table = messy_table(30_000)
    pacsv.write_csv(table, folder / "data.csv")
    pq.write_table(table, folder / "data.parquet", row_group_size=4_000)
    parts = folder / "parts"
    parts.mkdir()
    for i, start in enumerate(range(0, table.num_rows, 7_000)):
        pq.write_table(table.slice(start, 7_000), parts / f"part-{i:05d}.snappy.parquet")
    (parts / "_SUCCESS").write_bytes(b"")
    (parts / ".part-00000.crc").write_bytes(b"not parquet")
    return {"csv": folder / "data.csv", "parquet": folder / "data.parquet", "parts": parts}


def reference(plan_path: Path, data: Path) -> tuple[dict[str, np.ndarray], object]:
    plan = load_plan(plan_path)
    encoded = load_data(data, plan)
    return dict(count(encoded, plan).counts), encoded.report


def assert_same(result: object, counts: dict[str, np.ndarray], report: object) -> None:
    assert set(result.counts.counts) == set(counts)  # type: ignore[attr-defined]
    for name, cells in counts.items():
        np.testing.assert_array_equal(result.counts.counts[name], cells, err_msg=name)  # type: ignore[attr-defined]
    assert result.report == report  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_bundled_sample_counts_the_same_in_every_engine(engine: str) -> None:
    plan = load_plan(SAMPLE_PLAN)
    counts, report = reference(SAMPLE_PLAN, plan.data_path)
    assert_same(count_data(plan.data_path, plan, engine=engine), counts, report)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["csv", "parquet", "parts"])
def test_a_generated_file_counts_the_same_in_every_engine(
    engine: str, kind: str, generated: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrow_engine, "BATCH_ROWS", 1_000)  # many batches
    monkeypatch.setattr(arrow_engine, "BLOCK_BYTES", 20_000)
    monkeypatch.setattr(arrow_engine, "IN_MEMORY_BYTES", 0)  # stream even a small CSV
    plan_path = write_plan(generated["csv"].parent, "data.csv")
    counts, report = reference(plan_path, generated["csv"])
    plan = load_plan(plan_path)
    result = count_data(generated[kind], plan, engine=engine)
    assert result.engine == engine
    assert report.rows_read == 30_000 and report.columns[1].rows_to_other > 0  # type: ignore[attr-defined]
    assert_same(result, counts, report)


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "arrow"])
@pytest.mark.parametrize("kind", ["csv", "parts"])
def test_the_unit_cap_is_exact_across_batches_and_parts(
    engine: str, kind: str, generated: dict[str, Path]
) -> None:
    """Tables of unit-level columns do not depend on which rows of a unit are kept."""
    unit = "{kind: id, column: household, max_rows: 2}"
    plan_path = write_plan(generated["csv"].parent, "data.csv", unit)
    plan = load_plan(plan_path)
    encoded = load_data(generated["csv"], plan)
    result = count_data(generated[kind], plan, engine=engine)
    assert result.report.rows_read == encoded.report.rows_read
    dropped = result.report.rows_dropped_by_unit_cap
    assert dropped == encoded.report.rows_dropped_by_unit_cap > 1_000
    expected = count(encoded, plan)
    for name in ("total", "state", "state_by_size"):
        np.testing.assert_array_equal(result.counts.counts[name], expected.counts[name])
    kept = result.counts.counts["sex_by_age"].sum() + result.report.columns[1].rows_left_out
    assert result.rows == 30_000 - dropped and kept <= result.rows


def test_auto_picks_an_engine_that_can_cap_units(generated: dict[str, Path]) -> None:
    plan = load_plan(
        write_plan(
            generated["csv"].parent, "data.csv", "{kind: id, column: household, max_rows: 1}"
        )
    )
    assert count_data(generated["parquet"], plan).engine == "duckdb"
    with pytest.raises(DataError, match=r"caps the rows per unit \(`unit: id`\) only for a file"):
        count_data(generated["parts"], plan, engine="arrow")  # a folder streams: refused


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_arrow_caps_units_of_a_file_it_reads_whole(
    kind: str, generated: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 (every engine with `unit: id`): a file that fits in memory is read whole and
    capped by the in-memory path, so every unit's rows are seen together; a larger one is
    refused in one line naming the engines that stream it."""
    unit = "{kind: id, column: household, max_rows: 2}"
    plan = load_plan(write_plan(generated["csv"].parent, "data.csv", unit))
    encoded = load_data(generated["csv"], plan)
    result = count_data(generated[kind], plan, engine="arrow")
    assert result.engine == "arrow"
    assert result.report.rows_dropped_by_unit_cap == encoded.report.rows_dropped_by_unit_cap
    assert result.report.rows_dropped_by_unit_cap > 1_000
    expected = count(encoded, plan)
    for name in ("total", "state", "state_by_size"):  # unit-level columns: whichever rows kept
        np.testing.assert_array_equal(result.counts.counts[name], expected.counts[name])
    monkeypatch.setattr(arrow_engine, "IN_MEMORY_BYTES", 0)
    with pytest.raises(DataError, match="use --engine duckdb or spark"):
        count_data(generated[kind], plan, engine="arrow")


def test_an_accumulator_sees_every_batch_with_every_column(
    generated: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrow_engine, "BATCH_ROWS", 1_000)
    monkeypatch.setattr(arrow_engine, "IN_MEMORY_BYTES", 0)
    plan = load_plan(write_plan(generated["csv"].parent, "data.csv"))
    seen: list[pa.RecordBatch] = []
    for kind, engine in (("parts", "arrow"), ("parquet", "duckdb")):
        seen.clear()
        result = count_data(
            generated[kind], plan, engine=engine, new_accumulator=lambda: seen.append
        )
        assert sum(b.num_rows for b in seen) == 30_000 and len(seen) >= 5
        assert all(b.schema.names == ["household", "state", "sex", "size", "age"] for b in seen)
        assert result.accumulator is not None


@pytest.mark.parametrize("in_memory", [0, 1 << 30])
def test_the_row_limit_applies_to_every_engine(
    generated: dict[str, Path], monkeypatch: pytest.MonkeyPatch, in_memory: int
) -> None:
    monkeypatch.setattr(arrow_engine, "IN_MEMORY_BYTES", in_memory)
    plan = load_plan(write_plan(generated["csv"].parent, "data.csv"))
    limits = SizeLimits(max_rows=10_000)
    for kind, engine in (
        ("parquet", "arrow"),
        ("parts", "duckdb"),
        ("csv", "arrow"),
        ("csv", "duckdb"),
    ):
        with pytest.raises(DataError, match="row limit"):
            count_data(generated[kind], plan, engine=engine, limits=limits)


@pytest.mark.parametrize("engine", ["auto", "arrow", "duckdb"])
def test_validate_and_release_take_an_engine_and_a_row_limit(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dprelease.cli import main

    assert main(["validate", str(SAMPLE_PLAN), "--engine", engine]) == 0
    assert "50,000 rows read" in capsys.readouterr().err
    out = tmp_path / "r.zip"
    assert main(["release", str(SAMPLE_PLAN), "--engine", engine, "--out", str(out)]) == 0
    assert out.is_file()
    capsys.readouterr()
    assert main(["validate", str(SAMPLE_PLAN), "--engine", engine, "--max-rows", "49999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "row limit" in err and err.count("\n") == 1


def test_a_uri_reaches_the_engines_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--data hdfs:///…` (any URI) goes to the engines unchanged, where only Spark reads it;
    as a Path it became `hdfs:/…` and was refused as a missing file."""
    from dprelease.cli import main

    uri = "hdfs:///census/persons"
    status = main(["validate", str(SAMPLE_PLAN), "--data", uri, "--engine", "arrow"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "Only the spark engine reads 'hdfs:///census/persons'" in err


@pytest.mark.skipif(not spark_available(), reason="needs PySpark and Java")
def test_spark_reads_a_file_uri(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dprelease.cli import main

    parquet = tmp_path / "sample.parquet"
    codes = pacsv.ConvertOptions(column_types={"state": pa.string(), "county": pa.string()})
    pq.write_table(
        pacsv.read_csv(ROOT / "data" / "census_sample.csv", convert_options=codes), parquet
    )
    uri = parquet.as_uri()  # codes stay text ('01'): as ints every row would be left out
    assert main(["validate", str(SAMPLE_PLAN), "--data", uri, "--engine", "spark"]) == 0
    assert "50,000 rows read" in capsys.readouterr().err
