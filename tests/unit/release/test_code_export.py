"""`dprelease export`: the release as a script or a notebook that runs through the library
(issue 24). The generated code is executed on the bundled sample, in a child process, with the
test's own ledger: it must release, charge once, and show every table with its margins. The
child runs where a user runs it (issue 37): a folder outside the repository, no PYTHONPATH, a
Python where requirements.txt is installed (`helpers.install`)."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from dprelease.ledger.store import Ledger
from dprelease.release.code_export import release_script
from helpers.cli import ROOT, SAMPLE_PLAN, run
from helpers.install import bare_env, installed_python
from helpers.plans import plan_dict

SAMPLE_DATA = ROOT / "data" / "census_sample.csv"
TABLES = 16  # the sample plan's tables


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python where `pip install -r requirements.txt` installed dprelease."""
    return installed_python(tmp_path_factory.mktemp("venv"))


def run_code(python: Path, path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The code as a user runs it: from `cwd` (outside the repository), no PYTHONPATH."""
    assert not cwd.resolve().is_relative_to(ROOT)
    return subprocess.run(
        [str(python), str(path)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=bare_env(DPRELEASE_LEDGER=os.environ["DPRELEASE_LEDGER"]),
        timeout=300,
    )


def charges(ledger: Path) -> int:
    book = Ledger(ledger)
    return sum(book.balance(key).releases for key, _ in book.datasets())


def check_release(result: subprocess.CompletedProcess[str], cwd: Path, ledger: Path) -> None:
    """The code printed every table with its `moe`, wrote one zip, and charged once."""
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("\n== ") == TABLES, out[-2000:]
    assert "== race (7 rows) ==" in out
    header = out.split("== race (7 rows) ==\n", 1)[1].splitlines()[0].split()
    assert header == ["race", "count", "moe"]
    zips = list(cwd.glob("release-*.zip"))
    assert len(zips) == 1, sorted(p.name for p in cwd.iterdir())
    with zipfile.ZipFile(zips[0]) as archive:
        meta = json.loads(archive.read("metadata.json"))
        assert len([n for n in archive.namelist() if n.startswith("tables/")]) == TABLES
    assert meta["ledger"]["release_id"] in out
    assert charges(ledger) == 1


def test_the_exported_script_releases_the_sample(tmp_path, ledger_file, python):
    script = tmp_path / "release_sample.py"
    made = run("export", str(SAMPLE_PLAN), "--script", str(script))
    assert made.returncode == 0, made.stderr
    assert f"wrote {script}" in made.stdout
    assert not ledger_file.exists()  # exporting spends nothing
    check_release(run_code(python, script, tmp_path), tmp_path, ledger_file)


def test_the_exported_notebook_is_nbformat_4_and_its_code_runs(tmp_path, ledger_file, python):
    notebook = tmp_path / "release.ipynb"
    made = run("export", str(SAMPLE_PLAN), "--notebook", str(notebook), "--data", str(SAMPLE_DATA))
    assert made.returncode == 0, made.stderr
    document = json.loads(notebook.read_text())
    assert (document["nbformat"], document["nbformat_minor"]) == (4, 5)
    assert document["metadata"]["kernelspec"]["name"] == "python3"
    kinds = [cell["cell_type"] for cell in document["cells"]]
    assert set(kinds) == {"markdown", "code"} and kinds[0] == "markdown"
    for cell in document["cells"]:  # the fields nbformat 4.5 requires of each cell
        assert isinstance(cell["id"], str) and isinstance(cell["source"], list)
        assert cell["metadata"] == {}
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    assert len({cell["id"] for cell in document["cells"]}) == len(kinds)
    code = "\n".join("".join(c["source"]) for c in document["cells"] if c["cell_type"] == "code")
    concatenated = tmp_path / "cells.py"
    concatenated.write_text(code)
    check_release(run_code(python, concatenated, tmp_path), tmp_path, ledger_file)


def test_the_plan_text_survives_quotes_and_backslashes():
    """The plan is embedded as a string literal: what it says must come back exactly."""
    from dprelease.plan.parse import loads_plan

    plan = {
        "version": 1,
        "dataset": 'a "quoted""" name \\ with a backslash',
        "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
        "tables": [{"name": "sex", "by": ["sex"]}],
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }
    script = release_script(plan, "people.csv")
    namespace: dict[str, object] = {}
    first = script.split("def main()", 1)[0]  # the constants, before any release
    exec(compile(first, "release.py", "exec"), namespace)
    assert loads_plan(str(namespace["PLAN_YAML"]), "yaml").dataset == plan["dataset"]
    assert namespace["DATA_FILE"] == Path("people.csv")


def test_the_script_over_the_cap_ends_in_one_line_and_exit_2(tmp_path, ledger_file, python):
    """Issue 37: a release over the data set's cap is the user's to fix: the script says so
    in one line `error: …` and exits 2, as the CLI does, instead of a BudgetError traceback."""
    (tmp_path / "people.csv").write_text(
        "age,sex,race\n"
        + "".join(f"{20 + i % 60},{'Female' if i % 2 else 'Male'},White\n" for i in range(200))
    )
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["data"] = "people.csv"
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    first = run("release", "plan.json", "--out", "first.zip", "--cap", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr  # the cap is spent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = elsewhere / "again.py"
    assert run("export", "plan.json", "--script", str(script), cwd=tmp_path).returncode == 0
    result = run_code(python, script, elsewhere)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "only ε = 0 is left of the lifetime cap 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert charges(ledger_file) == 1
    assert sorted(p.name for p in elsewhere.iterdir()) == ["again.py"]  # nothing written


def test_the_script_refuses_rows_left_out_as_the_cli_does(tmp_path, ledger_file, python):
    """Issue 37.3 in the exported code: every `sex` value is outside the domain (F/M against
    Female/Male), so the script stops in one line, charges nothing, and says how to confirm."""
    (tmp_path / "people.csv").write_text(
        "age,sex,race\n" + "".join(f"{20 + i % 60},{'FM'[i % 2]},White\n" for i in range(200))
    )
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["data"] = "people.csv"
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    script = tmp_path / "release.py"
    assert run("export", "plan.json", "--script", str(script), cwd=tmp_path).returncode == 0
    result = run_code(python, script, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: Table 'sex' leaves out more than 1% of the rows")
    assert result.stderr.count("\n") == 1 and "ALLOW_LEFT_OUT = True" in result.stderr
    assert charges(ledger_file) == 0
    script.write_text(script.read_text().replace("ALLOW_LEFT_OUT = False", "ALLOW_LEFT_OUT = True"))
    assert run_code(python, script, tmp_path).returncode == 0
    assert charges(ledger_file) == 1


def test_the_script_without_its_data_file_ends_in_one_line(tmp_path, python):
    script = tmp_path / "release.py"
    made = run("export", str(SAMPLE_PLAN), "--script", str(script), "--data", "gone.csv")
    assert made.returncode == 0, made.stderr
    result = run_code(python, script, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: No such file") and "gone.csv" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (("--script", "code.txt"), "must end in .py or .ipynb"),
        (("--script", "x.py", "--notebook", "x.ipynb"), "not allowed with argument"),
        ((), "one of the arguments --notebook --script is required"),
    ],
)
def test_export_refuses_bad_output(tmp_path, args, pattern):
    result = run("export", str(SAMPLE_PLAN), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and pattern in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_never_overwrites(tmp_path):
    target = tmp_path / "release.py"
    target.write_text("mine\n")
    result = run("export", str(SAMPLE_PLAN), "--script", str(target))
    assert result.returncode == 2 and "error: " in result.stderr
    assert target.read_text() == "mine\n"
