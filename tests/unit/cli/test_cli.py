"""The command line as a user runs it: real processes, exit codes, one-line errors."""

import json
import subprocess
import zipfile

import pytest

from helpers.cli import SAMPLE_PLAN, run


def assert_user_error(result: subprocess.CompletedProcess[str], pattern: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    assert pattern in lines[0], lines[0]


def test_plan_json_reads_no_data_and_has_the_contract_keys(tmp_path):
    plan = tmp_path / "plan.yaml"
    text = SAMPLE_PLAN.read_text().replace("data: census_sample.csv", "data: missing.csv")
    plan.write_text(text)
    result = run("plan", str(plan), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    # the bundled plan uses the defaults: accounting auto (here pure wins), strategy auto
    assert out["accounting"] == out["accountant_choice"]["winner"] == "pure"
    assert out["confidence"] == 0.95 and out["strategy"] == "auto"
    assert out["total"]["epsilon"] <= 1.0 and out["total"]["delta"] is None
    assert {t["name"] for t in out["tables"]} >= {"county_by_sex", "state_by_race_by_hispanic"}
    assert all(t["expected_rmse"] > 0 for t in out["tables"])
    assert {m["name"] for m in out["measurements"]} >= {"county_by_sex"}


def test_plan_text_output():
    result = run("plan", str(SAMPLE_PLAN))
    assert result.returncode == 0
    assert "county_by_sex" in result.stdout and "discrete_laplace" in result.stdout
    assert "measured (the tables above are least-squares estimates from these)" in result.stdout


def test_release_zip_and_directory_are_complete_and_fresh(tmp_path):
    first, second = tmp_path / "r1.zip", tmp_path / "r2"
    assert run("release", str(SAMPLE_PLAN), "--out", str(first)).returncode == 0
    result = run("release", str(SAMPLE_PLAN), "--out", str(second), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total"]["epsilon"] <= 1.0
    with zipfile.ZipFile(first) as archive:
        names = set(archive.namelist())
        zipped = archive.read("tables/county_by_sex.csv")
        meta = json.loads(archive.read("metadata.json"))
    assert {"metadata.json", "report.html"} <= names
    assert {f"tables/{t['name']}.csv" for t in meta["tables"]} <= names
    assert {f"measurements/{m['name']}.csv" for m in meta["measurements"]} <= names
    on_disk = (second / "tables" / "county_by_sex.csv").read_bytes()
    assert zipped.splitlines()[0] == on_disk.splitlines()[0] == b"county,sex,count,moe"
    assert len(zipped.splitlines()) == len(on_disk.splitlines()) == 3143 * 2 + 1
    assert zipped != on_disk  # fresh noise each time
    assert "seed" not in json.dumps(meta).lower()


def test_release_refuses_to_overwrite(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert_user_error(run("release", str(SAMPLE_PLAN), "--out", str(out)), "already exists")


def test_validate_prints_every_problem(tmp_path):
    plan = tmp_path / "bad.yaml"
    plan.write_text(
        "columns: {sex: {kind: categorical, domain: [F, M]}}\n"
        "tables: [{name: a, by: [sexx]}, {name: b, by: [sex], wieght: 2}]\n"
        "budget: {accounting: zcdp, epsilon: -1}\n"
    )
    result = run("validate", str(plan))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) >= 3 and all(line.startswith("error: ") for line in lines)
    assert any("Did you mean 'sex'" in line for line in lines)
    assert any("Did you mean 'weight'" in line for line in lines)


def test_validate_with_data_reports_to_the_data_holder():
    result = run("validate", str(SAMPLE_PLAN))
    assert result.returncode == 0
    assert any(line.startswith("ok:") for line in result.stdout.splitlines()), result.stdout


def test_sample_writes_data_and_plan_that_release(tmp_path):
    data, plan = tmp_path / "s.csv", tmp_path / "s.plan.yaml"
    result = run("sample", "--rows", "2000", "--seed", "7", "--out", str(data), "--plan", str(plan))
    assert result.returncode == 0, result.stderr
    assert len(data.read_text().splitlines()) == 2001
    assert run("release", str(plan), "--out", str(tmp_path / "r.zip")).returncode == 0


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (("plan", "missing.yaml"), "does not exist"),
        (("plan", "plan.txt"), "must end in .yaml"),
        (("sample", "--rows", "0", "--out", "x.csv"), "rows"),
        (("sample", "--rows", "ten", "--out", "x.csv"), "invalid int value"),
        (("frobnicate",), "invalid choice"),
        (("release", "PLAN", "--data", "nope.csv", "--out", "r.zip"), "does not exist"),
        (("release", "PLAN"), "--out"),
        (("release", "PLAN", "--out", "no/such/dir/r.zip"), "does not exist"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(tmp_path, args, pattern):
    args = tuple(str(SAMPLE_PLAN) if a == "PLAN" else a for a in args)
    assert_user_error(run(*args, cwd=tmp_path), pattern)


@pytest.mark.parametrize(
    ("budget", "pattern"),
    [
        ("{accounting: pure, epsilon: 0}", "greater than 0"),
        ("{accounting: pure, epsilon: -1}", "greater than 0"),
        ("{accounting: pure, epsilon: .nan}", "finite"),
        ("{accounting: pure, epsilon: 1e308}", "too large to be meaningful"),
        ("{accounting: zcdp, epsilon: 1, delta: 0}", "above 0 and at most 0.001"),
        ("{accounting: zcdp, epsilon: 1, delta: 1}", "above 0 and at most 0.001"),
        ("{accounting: zcdp, epsilon: 1, delta: 1e-400}", "above 0 and at most 0.001"),
        ("{accounting: zcdp, epsilon: 1}", "delta is required"),
        ("{accounting: pure, epsilon: 0.01, allocation: targets}", "too small for the targets"),
    ],
)
def test_bad_budgets(tmp_path, budget, pattern):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "columns: {sex: {kind: categorical, domain: [F, M]}}\n"
        "tables: [{name: sex, by: [sex], target: {moe: 5}}]\n"
        f"budget: {budget}\n"
    )
    assert_user_error(run("plan", str(plan)), pattern)


@pytest.mark.parametrize(
    ("content", "name", "pattern"),
    [
        (b"", "empty.csv", "empty"),
        (b"sex,age\n", "header.csv", "no rows"),
        (b"PK\x03\x04 not really a csv", "fake.csv", "Excel/zip"),
        (b"sex\x00,age\n\x00\x01", "nul.csv", "NUL bytes"),
        (b"sex,age\nF,3\nM,4,5,6\n", "ragged.csv", "Line 3"),
        (b"sex,sex\nF,M\n", "dup.csv", "duplicate"),
        (b"gender\nF\n", "nosex.csv", "no column 'sex'"),
    ],
)
def test_bad_data_files(tmp_path, content, name, pattern):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "columns: {sex: {kind: categorical, domain: [F, M]}}\n"
        "tables: [{name: sex, by: [sex]}]\n"
        "budget: {accounting: pure, epsilon: 1}\n"
    )
    (tmp_path / name).write_bytes(content)
    result = run("release", str(plan), "--data", name, "--out", "r.zip", cwd=tmp_path)
    assert_user_error(result, pattern)
    assert not (tmp_path / "r.zip").exists()


def test_sample_never_overwrites_and_checks_extensions(tmp_path):
    existing = tmp_path / "s.csv"
    existing.write_text("keep me")
    assert_user_error(run("sample", "--rows", "10", "--out", str(existing)), "already exists")
    assert existing.read_text() == "keep me"
    assert_user_error(run("sample", "--rows", "10", "--out", str(tmp_path / "s.xlsx")), ".csv")
    assert_user_error(
        run("sample", "--rows", "10", "--out", str(tmp_path / "no" / "s.csv")), "does not exist"
    )
    result = run(
        "sample",
        "--rows",
        "10",
        "--out",
        str(tmp_path / "n.csv"),
        "--plan",
        str(tmp_path / "p.txt"),
    )
    assert_user_error(result, ".yaml")
    assert not (tmp_path / "n.csv").exists()  # nothing written when an argument is wrong
    json_plan = tmp_path / "p.json"
    assert (
        run(
            "sample", "--rows", "50", "--out", str(tmp_path / "j.csv"), "--plan", str(json_plan)
        ).returncode
        == 0
    )
    assert run("plan", str(json_plan)).returncode == 0


def test_an_unwritable_output_is_a_user_error(tmp_path):
    assert_user_error(run("release", str(SAMPLE_PLAN), "--out", "/proc/dprelease.zip"), "")
    assert_user_error(
        run("release", str(SAMPLE_PLAN), "--data", str(tmp_path), "--out", "r.zip", cwd=tmp_path),
        "is a folder",
    )
