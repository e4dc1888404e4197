"""Issue 35, finding 2: data with rows in a structural-zero cell are refused before any noise.

Before the fix the release was charged, the cell read 0 and the totals were short by the rows
the zero hid. Now: exit 2 and one line naming the zero (never a count), nothing charged.
"""

from __future__ import annotations

from dprelease import cli
from dprelease.ledger.files import default_ledger_path
from dprelease.ledger.store import Ledger

PLAN = """
columns:
  sex: {kind: categorical, domain: [F, M]}
  tenure: {kind: categorical, domain: [Owner, Renter]}
tables:
  - {name: total, by: []}
  - {name: sex_by_tenure, by: [sex, tenure]}
structural_zeros:
  - {sex: [F], tenure: [Owner]}
budget: {epsilon: 1}
"""
POPULATED = 1_234  # rows in the zero cell: must never be printed


def _write(tmp_path, zero_rows: int):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(PLAN)
    data = tmp_path / "data.csv"
    rows = ["F,Owner"] * zero_rows + ["F,Renter"] * 500 + ["M,Owner"] * 700 + ["M,Renter"] * 300
    data.write_text("sex,tenure\n" + "\n".join(rows) + "\n")
    return plan_path, data


def _entries() -> int:
    ledger = Ledger(default_ledger_path())
    return sum(len(ledger.entries(key)) for key, _ in ledger.datasets())


def test_rows_in_a_structural_zero_are_refused_uncharged(tmp_path, capsys):
    plan_path, data = _write(tmp_path, POPULATED)
    before = _entries()
    out = tmp_path / "out"
    args = ["release", str(plan_path), "--data", str(data), "--out", str(out)]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "structural zero sex in F and tenure in Owner" in err
    assert "1234" not in err.replace(",", "") and "1.234" not in err
    assert _entries() == before  # nothing charged
    assert not out.exists()


def test_data_that_respect_the_zero_are_released(tmp_path):
    plan_path, data = _write(tmp_path, 0)
    out = tmp_path / "out"
    assert cli.main(["release", str(plan_path), "--data", str(data), "--out", str(out)]) == 0


def test_a_zero_no_table_carries_is_checked_on_its_own_count(tmp_path, capsys):
    """The bundled sample's case: tables of sex and of tenure, none of both; the zero has its
    own (never published) count."""
    plan_path, data = _write(tmp_path, POPULATED)
    plan_path.write_text(
        PLAN.replace(
            "  - {name: sex_by_tenure, by: [sex, tenure]}",
            "  - {name: sex, by: [sex]}\n  - {name: tenure, by: [tenure]}",
        )
    )
    before = _entries()
    out = tmp_path / "out"
    assert cli.main(["release", str(plan_path), "--data", str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "structural zero sex in F and tenure in Owner" in err and err.count("\n") == 1
    assert _entries() == before and not out.exists()
