"""Issue 11: the ledger keyed by records (not bytes), names, the default δ cap, caps that keep
δ, `ledger show`/`ledger cap`, and format-1 ledgers kept readable."""

import io
import json
import sqlite3

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from dprelease.accounting.composition import Guarantee
from dprelease.data.fingerprint import fingerprint_table
from dprelease.data.read import read_data
from dprelease.errors import BudgetError
from dprelease.ledger.accounts import FORMAT
from dprelease.ledger.files import dataset_key
from dprelease.ledger.store import Ledger
from dprelease.limits import DELTA_LIMIT
from helpers.cli import run
from helpers.plans import plan_dict

A = "a" * 64
B = "b" * 64


def charge(ledger: Ledger, release_id: str, guarantee: Guarantee, key: str = A, **kw) -> None:
    with ledger.charge(key, release_id, guarantee, label="p", tables=["t"], **kw):
        pass


def test_setting_an_epsilon_cap_keeps_the_delta_cap(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_cap(A, 3.0, 1e-6)
    ledger.set_cap(A, 5.0)  # the reproduction: this erased the δ cap
    assert (ledger.balance(A).cap_epsilon, ledger.balance(A).cap_delta) == (5.0, 1e-6)
    ledger.set_cap(A, 5.0, None)  # None: back to the default
    assert ledger.balance(A).cap_delta == DELTA_LIMIT


def test_delta_is_always_accounted_against_a_default_cap(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    for i in range(3):
        charge(ledger, f"r{i}", Guarantee(0.001, 3e-4))  # no cap set at all
    with pytest.raises(
        BudgetError, match=r"needs δ = 0\.0003 but only δ = .* lifetime δ cap 0\.001"
    ):
        charge(ledger, "r3", Guarantee(0.001, 3e-4))
    assert ledger.balance(A).spent_delta <= DELTA_LIMIT
    with pytest.raises(BudgetError, match=r"between 0 and 0\.001"):
        charge(ledger, "big", Guarantee(0.001, 2.7e-3))


def test_the_same_records_under_a_new_name_are_charged_to_their_account(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    charge(ledger, "r1", Guarantee(1.0, None), name="census")
    account = ledger.account(A, "census-copy")
    assert account.key == A and account.name == "census"
    assert account.notice is not None and "charged before as 'census'" in account.notice
    charge(ledger, "r2", Guarantee(1.0, None), name="census-copy")
    assert ledger.balance(A).releases == 2 and ledger.lookup("census-copy") is None


def test_other_records_under_a_taken_name_are_refused(tmp_path):
    # Issue 34: a name typed in the dashboard showed and spent another data set's account.
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_cap(A, 1.5, name="census")
    charge(ledger, "r1", Guarantee(1.0, None), name="census")
    with pytest.raises(BudgetError, match=r"The account 'census' holds other records"):
        ledger.account(B, "census")
    with pytest.raises(BudgetError, match=r"holds other records"):
        charge(ledger, "r2", Guarantee(0.5, None), key=B, name="census")
    with pytest.raises(BudgetError, match=r"holds other records"):
        ledger.set_cap(B, 0.0, name="census", only_lower=True)  # the dashboard's lowering
    assert ledger.balance(A).releases == 1 and ledger.balance(A).cap_epsilon == 1.5
    assert ledger.lookup("census") == A


def test_records_and_name_of_two_accounts_are_refused(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    charge(ledger, "r1", Guarantee(1.0, None), key=A, name="one")
    charge(ledger, "r2", Guarantee(1.0, None), key=B, name="two")
    with pytest.raises(BudgetError, match="names the account 'two'"):
        charge(ledger, "r3", Guarantee(1.0, None), key=A, name="two")


def test_a_format_1_ledger_is_upgraded_and_its_accounts_continue(tmp_path):
    path = tmp_path / "old.sqlite"
    legacy = dataset_key(b"age\n34\n")
    with sqlite3.connect(path) as conn:  # the layout of format 1, as the first round wrote it
        conn.execute(
            "CREATE TABLE caps (dataset TEXT PRIMARY KEY, epsilon REAL, delta REAL,"
            " updated TEXT NOT NULL)"
        )
        conn.execute(
            "CREATE TABLE charges (release_id TEXT PRIMARY KEY, dataset TEXT NOT NULL,"
            " epsilon REAL NOT NULL, delta REAL NOT NULL, rho REAL, accounting TEXT NOT NULL,"
            " label TEXT NOT NULL, tables TEXT NOT NULL, created TEXT NOT NULL)"
        )
        conn.execute("CREATE INDEX charges_by_dataset ON charges (dataset)")
        conn.execute("INSERT INTO caps VALUES (?, 2.0, NULL, 'then')", (legacy,))
        conn.execute(
            "INSERT INTO charges VALUES"
            " ('old', ?, 1.5, 0.0, NULL, 'basic', 'p', '[\"t\"]', 'then')",
            (legacy,),
        )
        conn.execute("PRAGMA application_id = 1685090917")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    ledger = Ledger(path)
    assert ledger.balance(legacy).spent_epsilon == 1.5
    records = fingerprint_table(read_data(b"age\n34\n", filename="d.csv")).key()
    with pytest.raises(BudgetError, match=r"only ε = 0\.5 is left"):
        charge(ledger, "new", Guarantee(1.0, None), key=records, legacy=legacy)
    charge(ledger, "new", Guarantee(0.5, None), key=records, legacy=legacy)
    assert ledger.balance(records).spent_epsilon == 2.0  # one account, old and new charges
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    conn.close()


# --- through the command line ------------------------------------------------------------------

ROWS = "age,sex,race\n" + "".join(
    f"{20 + i % 60},{'Female' if i % 2 else 'Male'},{'White' if i % 3 else 'Asian'}\n"
    for i in range(200)
)


def test_a_newline_or_parquet_copy_does_not_open_a_new_account(tmp_path):
    (tmp_path / "people.csv").write_text(ROWS)
    (tmp_path / "newline.csv").write_text(ROWS + "\n")
    buffer = io.BytesIO()
    pq.write_table(pacsv.read_csv(io.BytesIO(ROWS.encode())), buffer)
    (tmp_path / "people.parquet").write_bytes(buffer.getvalue())
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    args = ("release", "plan.json", "--ledger", "l.sqlite")
    first = run(*args, "--data", "people.csv", "--out", "a.zip", "--cap", "2", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert run(*args, "--data", "newline.csv", "--out", "b.zip", cwd=tmp_path).returncode == 0
    third = run(*args, "--data", "people.parquet", "--out", "c.zip", cwd=tmp_path)
    assert third.returncode == 2 and "only ε = 0 is left" in third.stderr
    shown = run("ledger", "show", "--ledger", "l.sqlite", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert len(data["datasets"]) == 1
    account = data["datasets"][0]
    assert set(account) == {"key", "name", "cap", "spent", "composed", "left", "releases"}
    assert account["cap"] == {"epsilon": 2.0, "delta": DELTA_LIMIT}
    assert account["spent"] == {"epsilon": 2.0, "delta": 0.0}
    assert [set(r) for r in account["releases"]] == [
        {"id", "created", "epsilon", "delta", "rho", "accounting", "tables", "invariants"}
    ] * 2
    capped = run(
        "ledger",
        "cap",
        "--ledger",
        "l.sqlite",
        "--dataset",
        account["key"],
        "--epsilon",
        "3",
        "--delta",
        "1e-6",
        cwd=tmp_path,
    )
    assert capped.returncode == 0, capped.stderr
    again = run(
        "ledger",
        "cap",
        "--ledger",
        "l.sqlite",
        "--dataset",
        account["key"],
        "--epsilon",
        "4",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    cap = json.loads(run("ledger", "show", "--ledger", "l.sqlite", "--json", cwd=tmp_path).stdout)
    assert cap["datasets"][0]["cap"] == {"epsilon": 4.0, "delta": 1e-6}
    text = run("ledger", "show", "--ledger", "l.sqlite", cwd=tmp_path)
    assert account["key"] in text.stdout and "2 release(s)" in text.stdout
    unknown = run(
        "ledger", "cap", "--ledger", "l.sqlite", "--dataset", "nope", "--epsilon", "1", cwd=tmp_path
    )
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: No data set")
    big = run(
        "ledger",
        "cap",
        "--ledger",
        "l.sqlite",
        "--dataset",
        account["key"],
        "--epsilon",
        "1",
        "--delta",
        "0.5",
        cwd=tmp_path,
    )
    assert big.returncode == 2 and "fails outright" in big.stderr


def test_the_plan_names_the_account_and_a_new_name_is_reported(tmp_path):
    (tmp_path / "people.csv").write_text(ROWS)
    for name in ("census", "census-again"):
        raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
        raw.update(data="people.csv", dataset=name)
        (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    first = run("release", "census.json", "--ledger", "l.sqlite", "--out", "a.zip", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = run(
        "release", "census-again.json", "--ledger", "l.sqlite", "--out", "b.zip", cwd=tmp_path
    )
    assert second.returncode == 0, second.stderr
    assert "ledger: note: These records were charged before as 'census'" in second.stderr
    shown = json.loads(run("ledger", "show", "--ledger", "l.sqlite", "--json", cwd=tmp_path).stdout)
    assert [(d["name"], len(d["releases"])) for d in shown["datasets"]] == [("census", 2)]
