"""`dprelease release --ledger`: real processes, a real ledger file, one-line errors."""

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from dprelease.data.fingerprint import fingerprint_table
from dprelease.data.read import read_data
from dprelease.ledger.store import Ledger
from helpers.cli import run as run_in_process
from helpers.plans import plan_dict

ROWS = "age,sex,race\n" + "".join(
    f"{20 + i % 60},{'Female' if i % 2 else 'Male'},{'White' if i % 3 else 'Asian'}\n"
    for i in range(200)
)


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_in_process(*args, cwd=cwd, env=env)


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text(ROWS)
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["data"] = "people.csv"
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(raw))
    return path


def records_key(path: Path) -> str:
    return fingerprint_table(read_data(path)).key()


def assert_one_line_error(result: subprocess.CompletedProcess[str], pattern: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert pattern in result.stderr


def test_releases_are_charged_until_the_cap_refuses(tmp_path, plan):
    key = records_key(tmp_path / "people.csv")
    release = ("release", "plan.json", "--ledger", "l.sqlite")
    first = run(*release, "--out", "r1.zip", "--cap", "2.5", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "ledger: this release spent ε = 1; this data set has spent ε = 1 over 1 " in (
        first.stderr
    )
    assert "lifetime cap 2.5, ε = 1.5 left" in first.stderr
    second = run(*release, "--out", "r2", "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["total"]["epsilon"] == 1.0  # stdout is still pure JSON
    third = run(*release, "--out", "r3.zip", cwd=tmp_path)
    assert_one_line_error(
        third,
        "This release needs ε = 1 but only ε = 0.5 is left of the lifetime cap 2.5 for this "
        "data set; lower the budget or raise the cap.",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # nothing staged is left behind
        "l.sqlite",
        "people.csv",
        "plan.json",
        "r1.zip",
        "r2",
    ]
    with zipfile.ZipFile(tmp_path / "r1.zip") as archive:
        assert "metadata.json" in archive.namelist()
    entries = Ledger(tmp_path / "l.sqlite").entries(key)
    assert [(e.epsilon, e.label) for e in entries] == [(1.0, "plan.json (pure)")] * 2
    assert entries[0].tables == ("sex", "age_by_sex", "race")
    assert entries[0].release_id != entries[1].release_id


def test_raising_the_cap_lets_the_next_release_through(tmp_path, plan):
    args = ("release", "plan.json", "--ledger", "l.sqlite")
    assert run(*args, "--out", "a.zip", "--cap", "1", cwd=tmp_path).returncode == 0
    assert_one_line_error(run(*args, "--out", "b.zip", cwd=tmp_path), "only ε = 0 is left")
    assert run(*args, "--out", "b.zip", "--cap", "2", cwd=tmp_path).returncode == 0


def test_ledger_without_a_path_uses_the_environment(tmp_path, plan):
    env = {"DPRELEASE_LEDGER": str(tmp_path / "env.sqlite")}
    result = run("release", "plan.json", "--out", "r.zip", "--ledger", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    key = records_key(tmp_path / "people.csv")
    assert Ledger(tmp_path / "env.sqlite").balance(key).releases == 1


def metadata(out: Path) -> dict:
    return json.loads((out / "metadata.json").read_text())


def test_release_charges_the_default_ledger_without_being_asked(tmp_path, plan, ledger_file):
    """Issue 24.4: with no ledger option, `release` charges $DPRELEASE_LEDGER (the test's own
    file, tests/conftest.py), and a cap spent elsewhere (the dashboard) stops the CLI."""
    key = records_key(tmp_path / "people.csv")
    first = run("release", "plan.json", "--out", "r1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "ledger: this release spent ε = 1;" in first.stderr
    book = Ledger(ledger_file)
    assert book.balance(key).releases == 1
    entry = book.entries(key)[0]
    assert metadata(tmp_path / "r1")["ledger"] == {
        "release_id": entry.release_id,
        "dataset": None,
    }
    book.set_cap(key, 1.5)  # the rest of the cap is spent (as if in the dashboard)
    again = run("release", "plan.json", "--out", "r2", cwd=tmp_path)
    assert_one_line_error(again, "only ε = 0.5 is left of the lifetime cap 1.5")
    assert not (tmp_path / "r2").exists()
    assert book.balance(key).releases == 1


def test_no_ledger_warns_and_says_so_in_the_metadata(tmp_path, plan, ledger_file):
    result = run("release", "plan.json", "--out", "r", "--no-ledger", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: --no-ledger" in result.stderr
    assert metadata(tmp_path / "r")["ledger"] is None
    assert not ledger_file.exists()  # nothing was charged, no ledger was even created


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        (("--cap", "3"), "--cap sets a lifetime cap in a ledger; it cannot go with --no-ledger"),
        (("--ledger", "l.sqlite"), "argument --ledger: not allowed with argument --no-ledger"),
    ],
)
def test_no_ledger_refuses_ledger_options(tmp_path, plan, extra, pattern):
    result = run("release", "plan.json", "--out", "r.zip", "--no-ledger", *extra, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert pattern in result.stderr
    assert not (tmp_path / "r.zip").exists()


def test_cap_without_ledger_sets_it_in_the_default_ledger(tmp_path, plan, ledger_file):
    result = run("release", "plan.json", "--out", "r.zip", "--cap", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    balance = Ledger(ledger_file).balance(records_key(tmp_path / "people.csv"))
    assert (balance.cap_epsilon, balance.spent_epsilon) == (3.0, 1.0)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        ("not a database\n", "is not a readable dprelease ledger"),
        (None, "does not exist; create it first"),
    ],
)
def test_a_bad_ledger_is_a_one_line_error_and_nothing_is_released(tmp_path, plan, content, pattern):
    ledger = tmp_path / "l.sqlite"
    if content is None:
        ledger = tmp_path / "missing" / "l.sqlite"
    else:
        ledger.write_text(content)
    result = run("release", "plan.json", "--out", "r.zip", "--ledger", str(ledger), cwd=tmp_path)
    assert_one_line_error(result, pattern)
    assert not (tmp_path / "r.zip").exists()
