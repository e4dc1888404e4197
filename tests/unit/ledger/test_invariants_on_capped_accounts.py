"""Issue 35, finding 4: exact tables on an account that has a lifetime cap.

Before, a plan with `invariant: true` tables and a noisy table at ε = 1e-7 published an exact
cross-tab of records whose account had spent its cap. Now only the ledger's owner may allow
invariant tables on a capped account (`release --allow-invariants`); the refusal is one line
and charges nothing. (PostgreSQL's releaser role: `test_ledger_postgres.py`.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError
from dprelease.ledger.files import dataset_key
from dprelease.ledger.store import Ledger
from helpers.cli import run

KEY = dataset_key(b"a,b\nx,p\n")
PLAN = """
dataset: office
data: DATA
columns:
  a: {kind: categorical, domain: [x, y, z]}
  b: {kind: categorical, domain: [p, q]}
  c: {kind: categorical, domain: [u, v]}
tables:
  - {name: a_by_b, by: [a, b], invariant: true}
  - {name: c, by: [c]}
budget: {epsilon: 0.0000001}
"""


def _charge(ledger: Ledger, release_id: str, **extra: object) -> None:
    guarantee = Guarantee(epsilon=1e-7, delta=None)
    with ledger.charge(
        KEY,
        release_id,
        guarantee,
        label="p",
        tables=["b"],
        invariants=["a_by_b"],
        **extra,  # type: ignore[arg-type]
    ):
        pass


def test_a_capped_account_refuses_invariants_unless_the_owner_allows(tmp_path: Path):
    ledger = Ledger(tmp_path / "l.sqlite")
    _charge(ledger, "uncapped")  # no cap: the plan's own choice, as before
    ledger.set_cap(KEY, 1.0)
    with pytest.raises(BudgetError, match=r"^This account has a lifetime ε cap.*only by the"):
        _charge(ledger, "refused")
    assert ledger.balance(KEY).releases == 1  # nothing charged
    _charge(ledger, "allowed", allow_invariants=True)  # whoever writes the file owns it
    assert ledger.balance(KEY).releases == 2


def test_a_release_without_invariants_is_not_affected(tmp_path: Path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_cap(KEY, 1.0)
    with ledger.charge(KEY, "r", Guarantee(epsilon=0.5, delta=None), label="p", tables=["b"]):
        pass
    assert ledger.balance(KEY).releases == 1


def test_the_cli_refuses_exact_tables_on_a_capped_account_in_one_line(tmp_path: Path):
    data = tmp_path / "d.csv"
    data.write_text("a,b,c\n" + "x,p,u\ny,q,v\nz,p,u\n" * 40)
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN.replace("DATA", str(data)))
    ledger = str(tmp_path / "l.sqlite")
    for extra in (["--cap", "0.0000001"], []):  # the cap is set first, then the release
        refused = run("release", str(plan), "--ledger", ledger, *extra,
                      "--out", str(tmp_path / "r"))  # fmt: skip
        assert refused.returncode != 0
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "--allow-invariants" in lines[0], refused.stderr
        assert not (tmp_path / "r").exists()
    shown = json.loads(run("ledger", "show", "--ledger", ledger, "--json").stdout)
    assert [d["releases"] for d in shown["datasets"]] == [[]]  # capped, nothing charged
    allowed = run("release", str(plan), "--ledger", ledger, "--allow-invariants",
                  "--out", str(tmp_path / "ok"))  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    assert (tmp_path / "ok" / "tables" / "a_by_b.csv").exists()
    spent = run("release", str(plan), "--ledger", ledger, "--allow-invariants",
                "--out", str(tmp_path / "again"))  # fmt: skip
    assert spent.returncode != 0 and not (tmp_path / "again").exists()  # the cap is spent
