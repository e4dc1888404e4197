"""Issue 37: the data report counts, per survey weight, the rows with no weight and the rows
the clamp moved, in `validate` (text and `--json`) with every engine; those counts are the
data holder's own and never reach a release's files."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from helpers.cli import run
from helpers.weighted import BOUND, weighted_plan, write_weighted


def expected(data: Path) -> dict[str, int]:
    """The counts computed here, independently of the library."""
    missing = below = above = 0
    with data.open() as handle:
        for row in csv.DictReader(handle):
            try:
                weight = float(row["PWGTP"])
            except ValueError:
                weight = math.nan
            missing += math.isnan(weight)
            below += weight < 0
            above += weight > BOUND
    return {"missing": missing, "below": below, "above": above}


def weighted_folder(folder: Path, rows: int = 800) -> tuple[Path, dict[str, int]]:
    data = folder / "people.csv"
    write_weighted(data, rows=rows, seed=37)
    (folder / "plan.yaml").write_text(weighted_plan(data))
    return folder / "plan.yaml", expected(data)


@pytest.mark.parametrize("engine", ["arrow", "duckdb"])
def test_validate_counts_missing_and_clamped_weights(tmp_path: Path, engine: str) -> None:
    plan, counts = weighted_folder(tmp_path)
    assert counts["missing"] and counts["below"] and counts["above"]  # every kind is there
    result = run("validate", str(plan), "--engine", engine)
    assert result.returncode == 0, result.stderr
    clamped = counts["below"] + counts["above"]
    line = (
        f"survey weight 'PWGTP' (bounds [0, {BOUND}]): {counts['missing']} of 800 rows missing "
        f"or not a number (weight 0), {clamped} clamped ({counts['below']} below 0, "
        f"{counts['above']} above {BOUND})"
    )
    assert f"data (for you only, never in the release): {line}" in result.stderr.splitlines()
    assert "PWGTP" not in result.stdout  # the data report stays on stderr

    result = run("validate", str(plan), "--engine", engine, "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["ok"] and found["tables"] == 3 and found["errors"] == []
    assert found["data_report"]["survey_weights"] == [
        {
            "column": "PWGTP",
            "bounds": [0, BOUND],
            "rows": 800,
            "rows_missing": counts["missing"],
            "rows_clamped": clamped,
            "rows_below": counts["below"],
            "rows_above": counts["above"],
        }
    ]
    assert line in found["data_report"]["lines"]


def test_validate_json_reports_plan_errors(tmp_path: Path) -> None:
    plan, _ = weighted_folder(tmp_path, rows=50)
    plan.write_text(plan.read_text().replace("bounds: [0, 100]", "bounds: [0, -1]", 1))
    result = run("validate", str(plan), "--json")
    assert result.returncode == 2
    found = json.loads(result.stdout)
    assert not found["ok"] and found["data_report"] is None
    assert len(found["errors"]) == 1 and "survey_weight.bounds" in found["errors"][0]


def test_the_weight_counts_never_reach_a_release(tmp_path: Path) -> None:
    plan, _ = weighted_folder(tmp_path)
    out = tmp_path / "out"
    result = run("release", str(plan), "--out", str(out), "--no-ledger")
    assert result.returncode == 0, result.stderr
    assert "survey weight 'PWGTP' (bounds" in result.stderr  # the data holder saw them
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "metadata.json" for p in files)
    assert any(p.name.startswith("report") for p in files)
    for path in files:
        text = path.read_text(errors="replace")
        for phrase in ("missing or not a number", "clamped (", "rows_missing", "rows_above"):
            assert phrase not in text, (path.name, phrase)
    meta = json.loads((out / "metadata.json").read_text())

    def keys(value: object) -> list[str]:
        if isinstance(value, dict):
            return [k for key, v in value.items() for k in [str(key), *keys(v)]]
        return [k for v in value for k in keys(v)] if isinstance(value, list) else []

    assert not {"survey_weights", "rows_missing", "rows_clamped", "rows_below"} & set(keys(meta))
    for table in meta["tables"]:
        assert table.get("survey_weight", {"column": "PWGTP", "bounds": [0, BOUND]}) == {
            "column": "PWGTP",
            "bounds": [0, BOUND],
        }
