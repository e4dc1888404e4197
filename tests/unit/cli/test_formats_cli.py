"""The statisticians' formats end to end on the command line (issue 36): `validate --data x.dta`,
`release --data x.sav` charged to the same ledger account as the CSV of the same records,
`codebook` printing and filling a plan from value labels, and bad files in one `error:` line."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from helpers.cli import run
from helpers.statfiles import PLAN, write


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("formats_cli")
    for suffix in ("csv", "dta", "sav", "xpt"):
        write(here, suffix)
    (here / "plan.yaml").write_text(PLAN, "utf-8")
    return here


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("suffix", ["dta", "xpt"])
def test_validate_reads_a_stata_or_sas_file(folder: Path, suffix: str) -> None:
    result = run("validate", str(folder / "plan.yaml"), "--data", str(folder / f"survey.{suffix}"))
    assert result.returncode == 0, result.stderr
    assert "ok: 2 tables" in result.stdout and "300 rows read" in result.stderr
    hint = "note: the data file declares value labels for column 'region' (4 codes)"
    assert (hint in result.stdout) == (suffix == "dta")  # a transport file has none
    assert "column 'sex'" not in result.stdout  # the plan already took them


def test_release_of_a_sav_is_charged_to_the_csvs_account(folder: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    for suffix in ("sav", "csv"):
        out = tmp_path / f"r_{suffix}.zip"
        result = run(
            "release", str(folder / "plan.yaml"), "--data", str(folder / f"survey.{suffix}"),
            "--out", str(out), "--ledger", str(ledger),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(tmp_path / "r_sav.zip") as release:
        meta = json.loads(release.read("metadata.json"))
        report = release.read("report.html").decode("utf-8")
    assert "the value labels the data file declares" in report  # not "read from the data"
    assert meta["columns"]["sex"]["domain_source"] == "value_labels"
    assert meta["columns"]["sex"]["value_labels"] == {"1": "Male", "2": "Female"}
    shown = run("ledger", "show", "--ledger", str(ledger), "--json")
    datasets = json.loads(shown.stdout)["datasets"]
    assert len(datasets) == 1 and datasets[0]["spent"]["epsilon"] == 2.0  # one account


def test_codebook_prints_the_value_labels_as_plan_columns(folder: Path) -> None:
    result = run("codebook", str(folder / "survey.dta"))
    assert result.returncode == 0, result.stderr
    assert "# age: Age in years" in result.stdout
    columns = yaml.safe_load(result.stdout)["columns"]
    assert columns["region"]["domain"] == [1, 2, 3, 4]
    assert columns["region"]["labels"]["3"] == "East"
    assert columns["sex"]["domain_source"] == "value_labels"
    as_json = json.loads(run("codebook", str(folder / "survey.sav"), "--json").stdout)
    assert as_json["value_labels"]["sex"]["domain"] == [1, 2]
    refused = one_error_line(run("codebook", str(folder / "survey.csv")))
    assert "'survey.csv'" in refused and "declares no value labels" in refused


def test_codebook_fills_a_plans_labelled_columns(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "filled.yaml"
    result = run(
        "codebook", str(folder / "survey.sav"), "--plan", str(folder / "plan.yaml"), "--out",
        str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "region, sex" in result.stdout or "sex, region" in result.stdout
    region = yaml.safe_load(out.read_text("utf-8"))["columns"]["region"]
    assert region["labels"] == {"1": "North", "2": "South", "3": "East", "4": "West"}
    assert region["domain_source"] == "value_labels"
    checked = run("validate", str(out), "--data", str(folder / "survey.sav"))
    assert checked.returncode == 0, checked.stderr


def test_bad_statistical_files_are_one_line(folder: Path, tmp_path: Path) -> None:
    plan = str(folder / "plan.yaml")
    broken = tmp_path / "broken.dta"
    broken.write_bytes((folder / "survey.dta").read_bytes()[:500])
    line = one_error_line(run("validate", plan, "--data", str(broken)))
    assert "'broken.dta'" in line and ".sav" in line and ".xpt" in line
    renamed = tmp_path / "spss.dta"
    renamed.write_bytes((folder / "survey.sav").read_bytes())
    line = one_error_line(run("release", plan, "--data", str(renamed), "--out", "x.zip"))
    assert "'spss.dta'" in line and "content is an SPSS file" in line and ".csv" in line
    line = one_error_line(
        run("validate", plan, "--data", str(folder / "survey.dta"), "--max-rows", "100")
    )
    assert "more than 100 rows (300 announced" in line
