"""Issue 37.3: rows left out, one rule for the CLI and the dashboard. A table or statistic that
leaves out more than 1% of the rows (a value outside the plan's domain, or missing; no number
in a statistic's column) is a problem for `validate` (exit 2) and refused by `release` (exit 2,
before anything is charged) unless `--allow-left-out`, the CLI's form of the dashboard's
confirmation (`dprelease.data.coverage.exceeds_gate`, GATE_SHARE). Before, on a file where no
value of `sex` was in the domain, `validate` ended `ok` and `release` charged with a note.
Messages never give the count of left-out rows: "more than 1%", as the dashboard's gate."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from dprelease.ledger.store import Ledger
from helpers.cli import run
from helpers.plans import plan_dict

ROWS = 200


def people(sex_of_row) -> str:  # type: ignore[no-untyped-def]
    return "age,sex,race,income\n" + "".join(
        f"{20 + i % 60},{sex_of_row(i)},White,{'N' if i % 2 else 1000 + i}\n" for i in range(ROWS)
    )


def write(folder: Path, data: str, *, median: bool = False, by: tuple[str, ...] = ("sex",)) -> None:
    (folder / "people.csv").write_text(data)
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["data"] = "people.csv"
    if median:  # every other income is 'N': half the rows have no number
        raw["columns"]["income"] = {"kind": "numeric", "bins": [0, 10**6]}
        raw["tables"].append(
            {
                "name": "median_income",
                "by": list(by),
                "stat": {"quantile": 0.5, "column": "income", "bounds": [0, 10000]},
            }
        )
    (folder / "plan.json").write_text(json.dumps(raw))


def charges(ledger: Path) -> int:
    if not ledger.exists():
        return 0
    book = Ledger(ledger)
    return sum(book.balance(key).releases for key, _ in book.datasets())


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def no_count_in(lines: list[str]) -> None:
    """The left-out rows are confidential: no figure but the rule's 1% (and '01' vs '1', and
    how many more tables)."""
    for line in lines:
        public = re.sub(r"1%|'01' vs '1'|\(and \d+ more\)", "", line)
        assert re.findall(r"\d[\d,.]*", public) == [], line


ABBREVIATED = people(lambda i: "F" if i % 2 else "M")  # the plan says Female, Male


def test_validate_reports_a_table_that_leaves_out_every_row(tmp_path):
    write(tmp_path, ABBREVIATED)
    result = run("validate", "plan.json", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    errors = error_lines(result)
    assert errors[0].startswith("error: Table 'sex' leaves out more than 1% of the rows")
    assert any("'age_by_sex'" in line for line in errors)
    assert not any("'race'" in line for line in errors)  # race loses nothing
    assert "--allow-left-out" in errors[0]
    assert "ok:" not in result.stdout
    no_count_in(errors)


def test_release_refuses_it_before_any_charge(tmp_path):
    write(tmp_path, ABBREVIATED)
    ledger = tmp_path / "l.sqlite"
    result = run("release", "plan.json", "--out", "r.zip", "--ledger", str(ledger), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: Table 'sex' leaves out more than 1% of the rows")
    assert result.stderr.count("\n") == 1 and "--allow-left-out" in result.stderr
    assert "Nothing was charged" in result.stderr
    no_count_in(error_lines(result))
    assert charges(ledger) == 0
    assert not (tmp_path / "r.zip").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_allow_left_out_releases_and_says_so(tmp_path, as_json):
    write(tmp_path, ABBREVIATED)
    ledger = tmp_path / "l.sqlite"
    args = ["release", "plan.json", "--out", "r.zip", "--ledger", str(ledger), "--allow-left-out"]
    result = run(*args, *(["--json"] if as_json else []), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: Table 'sex' leaves out more than 1% of the rows" in result.stderr
    if as_json:
        assert json.loads(result.stdout)["total"]["epsilon"] == 1.0  # stdout: the JSON alone
    assert charges(ledger) == 1


def test_a_statistic_with_no_number_in_half_its_rows_is_refused(tmp_path):
    write(tmp_path, people(lambda i: "Female" if i % 2 else "Male"), median=True)
    validated = run("validate", "plan.json", cwd=tmp_path)
    assert validated.returncode == 2, validated.stderr
    assert error_lines(validated)[0].startswith(
        "error: Statistic 'median_income' leaves out more than 1% of the rows"
    )
    ledger = tmp_path / "l.sqlite"
    released = run("release", "plan.json", "--out", "r", "--ledger", str(ledger), cwd=tmp_path)
    assert released.returncode == 2 and "'median_income'" in released.stderr
    assert released.stderr.count("\n") == 1
    assert charges(ledger) == 0 and not (tmp_path / "r").exists()


def test_one_row_in_two_hundred_is_under_the_rule(tmp_path):
    from dprelease.data.coverage import GATE_SHARE, exceeds_gate

    assert not exceeds_gate(2, ROWS) and exceeds_gate(3, ROWS)  # 1% of 200 is 2
    write(tmp_path, people(lambda i: "Femme" if i == 0 else ("Female" if i % 2 else "Male")))
    assert run("validate", "plan.json", cwd=tmp_path).returncode == 0
    result = run("release", "plan.json", "--out", "r.zip", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert GATE_SHARE == 0.01


def test_with_a_statistic_the_tables_are_checked_too_and_nothing_is_charged(tmp_path):
    """A plan with a statistic counts its tables inside the charge (after any discovered
    domain): a table over the rule is refused there, and the charge commits nothing."""
    # every income a number, the median over all rows: only the tables lose rows
    write(tmp_path, ABBREVIATED.replace(",N\n", ",5\n"), median=True, by=())
    ledger = tmp_path / "l.sqlite"
    released = run("release", "plan.json", "--out", "r", "--ledger", str(ledger), cwd=tmp_path)
    assert released.returncode == 2, released.stderr
    assert released.stderr.startswith("error: Table 'sex' leaves out more than 1% of the rows")
    assert released.stderr.count("\n") == 1
    assert charges(ledger) == 0 and not (tmp_path / "r").exists()
    validated = run("validate", "plan.json", cwd=tmp_path)
    assert validated.returncode == 2 and "Table 'sex'" in validated.stderr
