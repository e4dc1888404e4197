"""A survey-weighted release end to end through the CLI (issue 37.8): weighted cell totals
within their stated margins of the true weighted totals, the metadata naming the weight
column, weighted tables consistent with their weighted margin and never mixed with counts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from helpers.cli import run
from helpers.weighted import weighted_plan, write_weighted

SEEDS = (11, 12, 13, 14, 15)


def release(folder: Path, seed: int, **plan: object) -> tuple[Path, dict[str, np.ndarray]]:
    folder.mkdir(exist_ok=True)
    data = folder / "people.csv"
    truth = write_weighted(data, rows=3000, seed=seed)
    (folder / "plan.yaml").write_text(weighted_plan(data, **plan))  # type: ignore[arg-type]
    out = folder / "out"
    result = run(
        "release", str(folder / "plan.yaml"), "--data", str(data), "--out", str(out), "--no-ledger"
    )
    assert result.returncode == 0, result.stderr
    return out, truth


def table_rows(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_weighted_totals_lie_within_their_margins(tmp_path: Path) -> None:
    """95% margins: over 5 releases × 8 weighted cells, far more than 80% must hold (a
    weighted table priced as a count table would miss nearly every cell: its noise 100×)."""
    inside = cells = 0
    for seed in SEEDS:
        out, truth = release(tmp_path / str(seed), seed)
        for name in ("w_sex_age", "w_sex"):
            rows = table_rows(out, name)
            released = np.array([float(r["count"]) for r in rows])
            moe = np.array([float(r["moe"]) for r in rows])
            assert moe.min() > 100  # weighted units: about 100× a count's margin at ε = 1/3
            inside += int(np.sum(np.abs(released - truth[name]) <= moe))
            cells += len(rows)
    assert inside >= 0.8 * cells


def test_the_metadata_names_the_weight_and_the_tables_agree(tmp_path: Path) -> None:
    out, truth = release(tmp_path, 21, accounting="zcdp")
    meta = json.loads((out / "metadata.json").read_text())
    entries = {t["name"]: t for t in meta["tables"]}
    for name in ("w_sex_age", "w_sex"):
        assert entries[name]["survey_weight"] == {"column": "PWGTP", "bounds": [0, 100]}
        assert entries[name]["sensitivity"] == {"l1": 100, "l2": 100.0}
    assert "survey_weight" not in entries["sex"]
    assert entries["sex"]["sensitivity"] == {"l1": 1, "l2": 1.0}
    assert meta["strategy"] == "workload"
    # the weighted table adds up to its weighted margin (consistent), whole and non-negative
    fine = np.array([int(r["count"]) for r in table_rows(out, "w_sex_age")]).reshape(2, 3)
    margin = np.array([int(r["count"]) for r in table_rows(out, "w_sex")])
    np.testing.assert_array_equal(fine.sum(axis=1), margin)
    assert fine.min() >= 0
    # the count table is made consistent with no weighted table: it stays near the row counts
    counts = np.array([int(r["count"]) for r in table_rows(out, "sex")])
    assert abs(counts.sum() - 3000) < 200
    assert abs(margin.sum() - truth["w_sex"].sum()) < 0.05 * truth["w_sex"].sum()
    assert list(table_rows(out, "w_sex")[0]) == ["sex", "count", "moe"]
    report = (out / "report.html").read_text()
    assert "Weighted totals" in report and "weighted total of PWGTP" in report


def test_validate_names_a_missing_weight_column_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "people.csv"
    data.write_text("sex,age\nF,30\nM,40\n")
    (tmp_path / "plan.yaml").write_text(weighted_plan(data))
    for command in (["validate"], ["release", "--out", str(tmp_path / "out"), "--no-ledger"]):
        result = run(command[0], str(tmp_path / "plan.yaml"), "--data", str(data), *command[1:])
        assert result.returncode == 2
        errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1 and "PWGTP" in errors[0], result.stderr


@pytest.mark.parametrize("engine", ["arrow", "duckdb"])
def test_each_engine_releases_a_weighted_table(tmp_path: Path, engine: str) -> None:
    data = tmp_path / "people.csv"
    write_weighted(data, rows=500, seed=5)
    (tmp_path / "plan.yaml").write_text(weighted_plan(data))
    out = tmp_path / "out"
    result = run(
        "release", str(tmp_path / "plan.yaml"), "--out", str(out), "--no-ledger", "--engine", engine
    )
    assert result.returncode == 0, result.stderr
    assert len(table_rows(out, "w_sex_age")) == 6
