"""Issue 27: synthetic microdata. The published tables are the tabulations of microdata.csv,
on every table and every level of the hierarchy; its row count is the released total; a cycle
of tables is fitted and its misses reported; a plan the model cannot serve is one line."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dprelease.data.count import count, load_data
from dprelease.errors import DPReleaseError, PlanError
from dprelease.plan.parse import parse_plan
from dprelease.plan.yaml_text import plan_yaml
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files
from dprelease.sample.generator import sample_plan_dict, write_sample
from dprelease.synthetic.junction import check_model, junction_tree
from helpers.cli import ROOT, run

ROWS = 4000
SAMPLE_DATA = ROOT / "data" / "census_sample.csv"
SMALL_TABLES = ("total", "sex", "age", "race", "age_by_sex", "race_by_hispanic", "education_by_sex")


@pytest.fixture(scope="module")
def sample_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synthetic") / "sample.csv"
    write_sample(path, ROWS, seed=27)
    return path


def synthetic_plan(data: Path, small: bool = False) -> dict[str, Any]:
    """The sample plan with synthetic on; `small`: its tables without geography (a few
    hundred cells, for a small file: post-processing thousands of empty county cells of a
    small file takes minutes on a shared machine)."""
    plan = sample_plan_dict(str(data))
    plan["postprocess"] = {**plan["postprocess"], "synthetic": True}
    if small:
        plan["tables"] = [t for t in plan["tables"] if t["name"] in SMALL_TABLES]
    return plan


def read_csv(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))


def released_files(raw: dict[str, Any]) -> dict[str, bytes]:
    plan = parse_plan(raw)
    counts = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    return release_files(draw_release(plan, counts, simulations=3))


@pytest.fixture(scope="module")
def sample_release() -> dict[str, bytes]:
    """One release of the bundled sample (50,000 rows, its 16 tables) with synthetic on."""
    return released_files(synthetic_plan(SAMPLE_DATA))


def assert_tables_are_tabulations(files: dict[str, bytes]) -> list[dict[str, str]]:
    """Every table CSV equals the count of microdata.csv's rows in each of its cells."""
    meta = json.loads(files["metadata.json"])
    people = read_csv(files["microdata.csv"])
    assert meta["synthetic"]["rows"] == len(people)
    for entry in meta["tables"]:
        by = entry["by"]
        tally = Counter(tuple(person[c] for c in by) for person in people)
        for row in read_csv(files[entry["file"]]):
            assert int(row["count"]) == tally.get(tuple(row[c] for c in by), 0), entry["name"]
        assert entry["estimate"] == "model"
    return people


def test_every_table_is_a_tabulation_of_the_microdata(sample_release: dict[str, bytes]) -> None:
    """The bundled sample's 16 tables (county, state and county × sex included): each cell is
    the microdata's count; the hierarchy holds row by row; the rows are the released total."""
    files = sample_release
    people = assert_tables_are_tabulations(files)
    plan = parse_plan(synthetic_plan(SAMPLE_DATA))
    county = plan.schema["county"]
    parent_map = county.parent_map  # type: ignore[union-attr]
    assert parent_map is not None
    assert all(parent_map[p["county"]] == p["state"] for p in people)
    total = read_csv(files["tables/total.csv"])
    assert len(people) == int(total[0]["count"])
    meta = json.loads(files["metadata.json"])
    assert meta["synthetic"]["exact"] is True and meta["synthetic"]["unmatched"] == []
    assert "model estimates" in meta["synthetic"]["note"]
    assert "synthetic" in meta["postprocess"]["steps_applied"]
    assert meta["postprocess"]["synthetic"] is True
    assert all(t["released"]["method"] == "simulated" for t in meta["tables"])
    assert list(people[0]) == [
        "state", "county", "age", "sex", "race", "hispanic", "education",
        "household_size", "tenure",
    ]  # fmt: skip
    assert "Synthetic microdata" in files["report.html"].decode()


def test_binned_columns_hold_the_tables_codes_and_their_labels(sample_csv: Path) -> None:
    """A binned column holds the tables' codes `[a, b)`, and a labelled one its labels in
    `C_label` beside them, as the tables' CSVs do (issue 37: a join on the codes works)."""
    raw = synthetic_plan(sample_csv, small=True)
    edges = raw["columns"]["age"]["bins"]
    labels = [f"age {i}" for i in range(len(edges) - 1)]
    raw["columns"]["age"] = {**raw["columns"]["age"], "labels": labels}
    raw["columns"]["income"] = {**raw["columns"]["income"]}
    raw["tables"].append({"name": "income", "by": ["income"]})
    files = released_files(raw)
    people = read_csv(files["microdata.csv"])
    assert all(p["age"].startswith("[") and p["income"].startswith("[") for p in people)
    assert {p["age_label"] for p in people} <= set(labels) and "income_label" not in people[0]
    pairs = {(p["age"], p["age_label"]) for p in people}
    for entry in json.loads(files["metadata.json"])["tables"]:
        if entry["by"] == ["age"]:  # the same code and label pairs as the table's
            rows = read_csv(files[entry["file"]])
            assert pairs <= {(row["age"], row["age_label"]) for row in rows}
    assert_tables_are_tabulations(files)


def cycle_plan(data: Path, size: int = 4) -> dict[str, Any]:
    return {
        "version": 1,
        "data": str(data),
        "columns": {
            name: {"kind": "categorical", "domain": [str(i) for i in range(size)]}
            for name in ("a", "b", "c")
        },
        "tables": [
            {"name": "ab", "by": ["a", "b"]},
            {"name": "bc", "by": ["b", "c"]},
            {"name": "ca", "by": ["c", "a"]},
        ],
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10, "strategy": "workload"},
        "postprocess": {"synthetic": True},
    }


def cycle_data(path: Path, rows: int = 3000) -> Path:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, rows)
    b = (a + rng.integers(0, 2, rows)) % 4
    c = (b * rng.integers(1, 3, rows) + a) % 4
    path.write_text("a,b,c\n" + "".join(f"{x},{y},{z}\n" for x, y, z in zip(a, b, c, strict=True)))
    return path


def test_a_cycle_of_tables_is_fitted_and_its_misses_reported(tmp_path: Path) -> None:
    """ab, bc, ca form a cycle: the model joins them into one clique a × b × c fitted by IPF;
    the tables are still the records' tabulations, and any cell the records could not match
    is listed with its size."""
    raw = cycle_plan(cycle_data(tmp_path / "abc.csv"))
    plan = parse_plan(raw)
    tree = junction_tree(plan)
    assert not tree.exact and [n.key for n in tree.nodes] == [("a", "b", "c")]
    files = released_files(raw)
    assert_tables_are_tabulations(files)
    meta = json.loads(files["metadata.json"])["synthetic"]
    assert "cycle" in meta["model"]
    assert meta["exact"] == (meta["unmatched"] == [])
    for miss in meta["unmatched"]:
        assert miss["cells"] > 0 and 0 < miss["largest"] <= miss["total"]


def test_a_model_too_large_is_refused_from_the_plan(tmp_path: Path) -> None:
    """Three 300-value columns in a cycle would need a 27-million-cell clique: refused before
    any noise, from the plan alone."""
    plan = parse_plan(cycle_plan(tmp_path / "none.csv", size=300))
    with pytest.raises(PlanError, match="above the limit"):
        check_model(plan)


def test_a_synthetic_request_with_no_measurements_is_refused(sample_csv: Path) -> None:
    raw = synthetic_plan(sample_csv, small=True)
    raw["tables"] = [
        {"name": "age_mean", "by": ["sex"], "stat": {"mean": "household_size", "bounds": [1, 7]}}
    ]
    raw["columns"]["household_size"] = {"kind": "numeric", "bins": [1, 4, 8]}
    with pytest.raises(PlanError, match="needs measurements"):
        check_model(parse_plan(raw))


def test_cli_release_with_synthetic(sample_csv: Path, tmp_path: Path) -> None:
    """`release` writes microdata.csv whose rows are the released total; bad input is one
    line and exit 2, with nothing written."""
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(plan_yaml(synthetic_plan(sample_csv, small=True)))
    done = run("release", str(plan_path), "--out", str(tmp_path / "out"), "--no-ledger")
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out" / "microdata.csv").read_text().splitlines()
    total = read_csv((tmp_path / "out" / "tables" / "total.csv").read_bytes())
    assert len(lines) - 1 == int(total[0]["count"])

    big = tmp_path / "big.yaml"
    big.write_text(plan_yaml(cycle_plan(cycle_data(tmp_path / "abc.csv"), size=300)))
    refused = run("release", str(big), "--out", str(tmp_path / "out2"), "--no-ledger")
    assert refused.returncode == 2
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "above the limit" in errors[0]
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "out2").exists()
    planned = run("plan", str(big))  # refused from the plan alone, before any data
    assert planned.returncode == 2 and planned.stderr.count("error:") == 1
    assert "above the limit" in planned.stderr


def test_synthetic_microdata_hold_the_invariant_tables_exactly(sample_csv: Path) -> None:
    """The seam of two issue-27 features: with invariant tables (exact counts, no noise) and
    synthetic on, the records tabulate to the invariants' exact counts too, since the noisy
    tables are made consistent with them first."""
    raw = synthetic_plan(sample_csv, small=True)
    keep = {"total", "sex", "age_by_sex", "race"}
    raw["tables"] = [t for t in raw["tables"] if t["name"] in keep]
    for table in raw["tables"]:
        if table["name"] in ("total", "sex"):
            table["invariant"] = True
            table.pop("weight", None)  # an invariant takes no budget share
    files = released_files(raw)
    meta = json.loads(files["metadata.json"])
    people = read_csv(files["microdata.csv"])
    exact = {e["name"]: e for e in meta["tables"] if e.get("invariant")}
    assert set(exact) == {"total", "sex"}
    plan = parse_plan(raw)
    truth = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    tally = Counter(person["sex"] for person in people)
    sex_rows = read_csv(files[exact["sex"]["file"]])
    assert [int(r["count"]) for r in sex_rows] == list(truth.counts["sex"].astype(int))
    assert all(int(r["count"]) == tally.get(r["sex"], 0) for r in sex_rows)
    assert len(people) == int(truth.counts["total"][0])


def test_synthetic_refuses_an_invariant_no_noisy_table_determines(sample_csv: Path) -> None:
    raw = synthetic_plan(sample_csv, small=True)
    raw["tables"] = [t for t in raw["tables"] if t["name"] in {"total", "race", "age_by_sex"}]
    raw["tables"].append({"name": "hispanic", "by": ["hispanic"], "invariant": True})
    total = next(t for t in raw["tables"] if t["name"] == "total")
    total["invariant"] = True  # the total: a sum of the invariant hispanic table
    total.pop("weight", None)
    plan = parse_plan(raw)
    counts = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    with pytest.raises(DPReleaseError, match="cannot hold the invariant table 'hispanic'"):
        draw_release(plan, counts, simulations=0)
