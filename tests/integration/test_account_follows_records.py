"""An account follows the records, not their spelling (issue 34, point 2), as a user of the
command line meets it: each attack of the issue, tried with `release` against one ledger whose
cap the first release fills. Before the fix each of these opened a fresh account."""

from __future__ import annotations

import json
import random

import pytest

from helpers.cli import run
from helpers.plans import plan_dict

HEADER = ["person", "age", "sex", "race", "income", "note"]


def people(n: int, seed: int = 0) -> list[list[str]]:
    generator = random.Random(seed)
    return [
        [
            f"P{seed:02d}{i:06d}",  # an identifier: rows are all distinct
            str(generator.randint(0, 99)),
            generator.choice(["Female", "Male"]),
            generator.choice(["White", "Black", "Asian", "Other"]),
            f"{generator.uniform(0, 200_000):.2f}",
            generator.choice(["", "a", "b"]),
        ]
        for i in range(n)
    ]


def write(path, header: list[str], rows: list[list[str]]) -> None:
    path.write_text("\n".join(",".join(row) for row in [header, *rows]) + "\n")


@pytest.fixture
def spent(tmp_path):
    """A ledger whose account for people.csv has spent its whole cap of ε = 1."""
    write(tmp_path / "people.csv", HEADER, people(3_000))
    (tmp_path / "plan.json").write_text(
        json.dumps(plan_dict(accounting="pure", epsilon=1.0, delta=None))
    )
    first = release(tmp_path, "people.csv", "--cap", "1")
    assert first.returncode == 0, first.stderr
    return tmp_path


def release(folder, data: str, *extra: str):
    out = folder / f"out-{random.randrange(10**9)}.zip"
    return run(
        "release",
        "plan.json",
        "--data",
        data,
        "--ledger",
        "l.sqlite",
        "--out",
        str(out),
        *extra,
        cwd=folder,
    )


def accounts(folder) -> int:
    shown = run("ledger", "show", "--ledger", "l.sqlite", "--json", cwd=folder)
    return len(json.loads(shown.stdout)["datasets"])


def refused_by_the_cap(result) -> None:
    assert result.returncode == 2, result.stderr
    assert "is left of the lifetime cap 1" in result.stderr, result.stderr


def test_renaming_a_column_the_plan_does_not_read_keeps_the_account(spent):
    write(spent / "renamed.csv", ["id", *HEADER[1:5], "remark"], people(3_000))
    refused_by_the_cap(release(spent, "renamed.csv"))
    assert accounts(spent) == 1


def test_renaming_a_column_the_plan_reads_keeps_the_account(spent):
    rows = people(3_000)
    write(spent / "renamed.csv", [*HEADER[:2], "gender", *HEADER[3:]], rows)
    raw = json.loads((spent / "plan.json").read_text())
    raw["columns"]["gender"] = raw["columns"].pop("sex")
    for table in raw["tables"]:
        table["by"] = ["gender" if c == "sex" else c for c in table["by"]]
    (spent / "plan.json").write_text(json.dumps(raw))
    refused_by_the_cap(release(spent, "renamed.csv"))


def test_reordering_dropping_or_adding_unread_columns_keeps_the_account(spent):
    rows = people(3_000)
    order = [4, 2, 0, 3, 1, 5]
    write(
        spent / "reordered.csv", [HEADER[i] for i in order], [[r[i] for i in order] for r in rows]
    )
    refused_by_the_cap(release(spent, "reordered.csv"))
    keep = [1, 2, 3]  # only the plan's columns: age, sex, race
    write(spent / "dropped.csv", [HEADER[i] for i in keep], [[r[i] for i in keep] for r in rows])
    refused_by_the_cap(release(spent, "dropped.csv"))
    write(spent / "added.csv", [*HEADER, "weight"], [[*r, "1.5"] for r in rows])
    refused_by_the_cap(release(spent, "added.csv"))
    assert accounts(spent) == 1


def test_near_duplicates_are_refused_under_another_name_and_charged_to_their_account(tmp_path):
    rows = people(3_000)
    write(tmp_path / "people.csv", HEADER, rows)
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["dataset"] = "census-2020"
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    assert release(tmp_path, "people.csv", "--cap", "1").returncode == 0
    changed = rows[:-4] + people(3, seed=7)  # four rows removed, three added
    write(tmp_path / "changed.csv", HEADER, changed)
    refused_by_the_cap(release(tmp_path, "changed.csv"))  # under its name: its account, spent
    del raw["dataset"]
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    refused_by_the_cap(release(tmp_path, "changed.csv"))  # no name: the same account
    raw["dataset"] = "census-2020-fixed"
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    other = release(tmp_path, "changed.csv")
    assert other.returncode == 2
    assert "nearly the same as those of 'census-2020'" in other.stderr, other.stderr
    assert other.stderr.count("\n") == 1 and "P00" not in other.stderr  # one line, no value
    assert accounts(tmp_path) == 1


def test_other_records_under_a_taken_name_are_refused(spent):
    raw = json.loads((spent / "plan.json").read_text())
    raw["dataset"] = "census-2020"
    (spent / "plan.json").write_text(json.dumps(raw))
    write(spent / "year2.csv", HEADER, people(3_000, seed=1))
    named = release(spent, "year2.csv", "--cap", "5")
    assert named.returncode == 0, named.stderr  # a fresh data set takes the name
    write(spent / "year3.csv", HEADER, people(3_000, seed=2))
    taken = release(spent, "year3.csv")
    assert taken.returncode == 2 and "holds other records" in taken.stderr, taken.stderr
