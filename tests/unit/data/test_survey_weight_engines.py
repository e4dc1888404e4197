"""Every engine gives the same true weighted totals (issue 37.8), equal to an independent
oracle: weights clamped into [0, W], rounded half to even, 0 when missing or not a number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from dprelease.data.count import count, load_data
from dprelease.data.engines import count_data
from dprelease.errors import DataError
from dprelease.plan.parse import load_plan
from helpers.engines import ENGINES
from helpers.weighted import weighted_plan, write_weighted


def as_text_weights(data: Path) -> pa.Table:
    """The CSV as a table whose weights are text, as a CSV's are (blanks and `NA` kept)."""
    options = pacsv.ConvertOptions(column_types={"PWGTP": pa.string()}, strings_can_be_null=False)
    return pacsv.read_csv(data, convert_options=options)


@pytest.fixture(scope="module")
def weighted_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    folder = tmp_path_factory.mktemp("weighted")
    data = folder / "people.csv"
    truth = write_weighted(data, rows=4000, seed=3)
    (folder / "plan.yaml").write_text(weighted_plan(data))
    return data, truth


def test_the_in_memory_path_matches_the_oracle(
    weighted_file: tuple[Path, dict[str, np.ndarray]],
) -> None:
    data, truth = weighted_file
    plan = load_plan(data.parent / "plan.yaml")
    counts = count(load_data(data, plan), plan).counts
    for name, expected in truth.items():
        np.testing.assert_array_equal(counts[name], expected)
    assert counts["sex"].sum() == 4000  # the count table still counts rows


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["csv", "parquet", "parquet_numbers"])
def test_every_engine_gives_the_same_weighted_totals(
    weighted_file: tuple[Path, dict[str, np.ndarray]], engine: str, kind: str, tmp_path: Path
) -> None:
    data, truth = weighted_file
    plan = load_plan(data.parent / "plan.yaml")
    source = data
    if kind == "parquet":  # weights as text, as a CSV's are (numbers written as text)
        source = tmp_path / "people.parquet"
        pq.write_table(as_text_weights(data), source)
    if kind == "parquet_numbers":  # weights as doubles: blanks and `NA` null, one NaN
        source = tmp_path / "people.parquet"
        table = pacsv.read_csv(
            data,
            convert_options=pacsv.ConvertOptions(
                column_types={"PWGTP": pa.float64()}, null_values=["", "NA"]
            ),
        )
        weights = table.column("PWGTP").to_numpy(zero_copy_only=False).copy()
        first_null = int(np.flatnonzero(np.isnan(weights))[0])
        weights[first_null] = np.nan
        table = table.set_column(2, "PWGTP", pa.array(weights, from_pandas=False))
        pq.write_table(table, source)
    result = count_data(source, plan, engine=engine)
    for name, expected in truth.items():
        np.testing.assert_array_equal(result.counts.counts[name], expected, err_msg=name)


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "arrow"])
def test_a_unit_cap_keeps_the_weights_of_the_kept_rows(
    weighted_file: tuple[Path, dict[str, np.ndarray]], engine: str, tmp_path: Path
) -> None:
    """`unit: id` with one row per id: the query's FILTER (WHERE _keep) path, nothing dropped."""
    data, truth = weighted_file
    source = tmp_path / "people.parquet"
    table = as_text_weights(data)
    pq.write_table(table.append_column("pid", pa.array(map(str, range(table.num_rows)))), source)
    text = weighted_plan(source).replace("columns:", "unit: {kind: id, column: pid}\ncolumns:")
    (tmp_path / "plan.yaml").write_text(text)
    result = count_data(source, load_plan(tmp_path / "plan.yaml"), engine=engine)
    for name, expected in truth.items():
        np.testing.assert_array_equal(result.counts.counts[name], expected, err_msg=name)


@pytest.mark.parametrize("engine", ["arrow", "duckdb"])
def test_a_missing_weight_column_is_named_in_one_line(tmp_path: Path, engine: str) -> None:
    data = tmp_path / "people.csv"
    data.write_text("sex,age\nF,30\nM,40\n")
    (tmp_path / "plan.yaml").write_text(weighted_plan(data))
    with pytest.raises(DataError, match="PWGTP"):
        count_data(data, load_plan(tmp_path / "plan.yaml"), engine=engine)
