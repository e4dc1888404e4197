"""A team's shared ledger on PostgreSQL (issue 34): real servers and processes, no mocks.

Races run on both backends; the roles, a kill inside the charge and the connection errors on
a real PostgreSQL server (`helpers.postgres`; skipped without one, a failure under CI=1).
"""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError, LedgerError
from dprelease.ledger.files import dataset_key
from dprelease.ledger.store import Balance, Ledger
from helpers import ROOT
from helpers.cli import run
from helpers.postgres import RELEASER, releaser_url

KEY = dataset_key(b"age,sex\n34,F\n")
OTHER = dataset_key(b"another data set")
WORKERS = 8


def charge(ledger: Ledger, release_id: str, epsilon: float, **extra: object) -> None:
    guarantee = Guarantee(epsilon=epsilon, delta=None)
    with ledger.charge(KEY, release_id, guarantee, label="p", tables=["t"], **extra):  # type: ignore[arg-type]
        pass


def _release_until_refused(location: str, worker: int, results: object) -> None:
    """A child: charge 0.25 again and again until the cap refuses; report the successes."""
    ledger = Ledger(location)
    done = 0
    while True:
        try:
            charge(ledger, f"w{worker}-{done}", 0.25)
        except BudgetError:
            break
        done += 1
    results.put(done)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_eight_processes_releasing_at_once_never_overspend(ledger_at):
    """Every charge is one release, and together they never pass the cap (3.0: 12 fit)."""
    location = str(ledger_at)
    Ledger(location).set_cap(KEY, 3.0)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [
        context.Process(target=_release_until_refused, args=(location, i, results))
        for i in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    successes = sum(results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    balance = Ledger(location).balance(KEY)
    assert balance.spent_epsilon <= 3.0
    assert balance.releases == successes == 12  # one row per release that was handed out
    assert len(Ledger(location).entries(KEY)) == successes


HOLD = """
import sys
from dprelease.accounting.composition import Guarantee
from dprelease.ledger.store import Ledger
location, key = sys.argv[1:]
with Ledger(location).charge(key, "held", Guarantee(0.5, None), label="p", tables=["t"]):
    print("inside", flush=True)
    sys.stdin.readline()  # hold the charge open until killed
"""


def test_a_kill_inside_the_charge_block_charges_nothing_on_postgresql(postgres_ledger):
    Ledger(postgres_ledger).set_cap(KEY, 1.0)
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, postgres_ledger, KEY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "inside"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    ledger = Ledger(postgres_ledger, timeout=20)
    assert ledger.balance(KEY) == Balance(1.0, 1e-3, 0.0, 0.0, 0)
    charge(ledger, "after", 1.0)  # the lock went with the killed transaction
    assert ledger.balance(KEY).releases == 1


def test_a_writer_waits_for_the_lock_and_a_reader_does_not(postgres_ledger):
    Ledger(postgres_ledger).set_cap(KEY, 1.0)
    holder = Ledger(postgres_ledger)
    with holder.charge(KEY, "first", Guarantee(0.5, None), label="p", tables=["t"]):
        impatient = Ledger(postgres_ledger, timeout=0.2)
        assert impatient.balance(KEY).releases == 0  # a snapshot, no wait
        with pytest.raises(LedgerError, match=r"^The ledger .* is busy"):
            charge(impatient, "second", 0.1)
    assert Ledger(postgres_ledger).balance(KEY).releases == 1


# --- roles ------------------------------------------------------------------------------------


def test_a_releaser_releases_within_caps_and_may_only_lower_them(postgres_ledger):
    owner = Ledger(postgres_ledger)
    owner.set_cap(KEY, 1.0, 1e-6, name="census")
    releaser_location = releaser_url(postgres_ledger)
    with pytest.raises(LedgerError, match=r"ledger grant ROLE"):  # not granted yet
        Ledger(releaser_location).balance(KEY)
    owner.grant(RELEASER)
    releaser = Ledger(releaser_location)
    charge(releaser, "r1", 0.25, name="census")
    assert releaser.balance(KEY).releases == 1
    refused = r"^Only the ledger's owner \(role ledger_owner\) can raise or remove a cap; "
    with pytest.raises(LedgerError, match=refused):
        releaser.set_cap(KEY, 2.0)
    with pytest.raises(LedgerError, match=refused):
        releaser.set_cap(KEY, None)
    with pytest.raises(LedgerError, match=refused):
        releaser.set_cap(KEY, 1.0, 1e-4)  # the δ cap raised
    releaser.set_cap(KEY, 0.75, only_lower=True)  # lowering is anyone's (the dashboard)
    assert owner.balance(KEY).cap_epsilon == 0.75
    with pytest.raises(LedgerError, match=r"^Only the ledger's owner .* can name a data set"):
        releaser.set_cap(OTHER, 1.0, name="another")
    with pytest.raises(LedgerError, match=r"^Only the ledger's owner .* can grant"):
        releaser.grant(RELEASER)
    owner.set_cap(KEY, 5.0)  # the owner raises
    owner.set_cap(OTHER, 1.0, name="another")  # and names
    assert dict(owner.datasets()) == {KEY: "census", OTHER: "another"}


def test_the_database_itself_refuses_a_releasers_raise(postgres_ledger):
    """Not only the Python: the releaser's own SQL cannot raise a cap or name an account."""
    owner = Ledger(postgres_ledger)
    owner.set_cap(KEY, 1.0)
    owner.grant(RELEASER)
    with psycopg.connect(releaser_url(postgres_ledger), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="Only the ledger's owner"):
            conn.execute("UPDATE caps SET epsilon = 100")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE accounts SET name = 'mine'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM charges")
    assert owner.balance(KEY).cap_epsilon == 1.0


# --- one-line errors from the command line ----------------------------------------------------


def _port(url: str) -> str:
    return url.split("@", 1)[1].split("/", 1)[0].split(":")[1]


@pytest.mark.parametrize("case", ["bad url", "unreachable", "wrong password", "no database"])
def test_connection_failures_are_one_line_errors(postgres_server, tmp_path: Path, case: str):
    port = _port(postgres_server)
    url = {
        "bad url": "postgresql://user@host:notaport/db?sslmode=sideways",
        "unreachable": "postgresql://ledger_owner@127.0.0.1:1/ledger",
        "wrong password": f"postgresql://ledger_owner:wrong@127.0.0.1:{port}/ledger",
        "no database": f"postgresql://ledger_owner:owner-pw@127.0.0.1:{port}/missing",
    }[case]
    result = run("ledger", "show", "--ledger", url, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "wrong" not in result.stderr.split("(")[0]  # never the password


def test_the_ledger_command_grants_and_the_env_var_takes_a_url(postgres_ledger, tmp_path):
    Ledger(postgres_ledger).set_cap(KEY, 1.0, name="census")
    env = {"DPRELEASE_LEDGER": postgres_ledger}
    granted = run("ledger", "grant", RELEASER, cwd=tmp_path, env=env)
    assert granted.returncode == 0, granted.stderr
    as_releaser = {"DPRELEASE_LEDGER": releaser_url(postgres_ledger)}
    shown = run("ledger", "show", cwd=tmp_path, env=as_releaser)
    assert shown.returncode == 0 and "census" in shown.stdout, shown.stderr
    raised = run(
        "ledger", "cap", "--dataset", "census", "--epsilon", "9", cwd=tmp_path, env=as_releaser
    )
    assert raised.returncode == 2 and raised.stderr.startswith("error: Only the ledger's owner")
    assert (
        run(
            "ledger", "cap", "--dataset", "census", "--epsilon", "9", cwd=tmp_path, env=env
        ).returncode
        == 0
    )


def test_a_cli_release_and_the_dashboards_ledger_use_the_url(
    postgres_ledger, tmp_path, monkeypatch
):
    """`release --ledger URL` charges the PostgreSQL ledger; with the URL in $DPRELEASE_LEDGER,
    `open_ledger()` (the dashboard's ledger) opens the same one."""
    from dprelease.release.service import open_ledger
    from helpers.plans import plan_dict

    (tmp_path / "people.csv").write_text(
        "age,sex\n"
        + "".join(f"{20 + i % 60},{'Female' if i % 2 else 'Male'}\n" for i in range(200))
    )
    raw = plan_dict(accounting="pure", epsilon=1.0, delta=None)
    raw["data"] = "people.csv"
    raw["tables"] = [table for table in raw["tables"] if set(table["by"]) <= {"age", "sex"}]
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    release = ("release", "plan.json", "--ledger", postgres_ledger)
    first = run(*release, "--out", "r1.zip", "--cap", "1.5", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "owner-pw" not in first.stderr  # the URL is shown without its password
    second = run(*release, "--out", "r2.zip", cwd=tmp_path)
    assert second.returncode == 2 and "only ε = 0.5 is left" in second.stderr, second.stderr
    monkeypatch.setenv("DPRELEASE_LEDGER", postgres_ledger)
    [(key, _)] = open_ledger().datasets()
    assert open_ledger().balance(key).releases == 1


def test_grant_errors_are_one_line(postgres_ledger, tmp_path):
    on_file = run("ledger", "grant", RELEASER, "--ledger", str(tmp_path / "l.sqlite"), cwd=tmp_path)
    assert on_file.returncode == 2 and on_file.stderr.startswith("error: Roles are for a Post")
    nobody = run("ledger", "grant", "nobody_here", "--ledger", postgres_ledger, cwd=tmp_path)
    assert nobody.returncode == 2 and nobody.stderr.startswith("error: No role 'nobody_here'")
    assert nobody.stderr.count("\n") == 1


@pytest.mark.slow
def test_only_the_owner_allows_exact_tables_on_a_capped_account(postgres_ledger):
    """Issue 35, finding 4: a releaser role cannot publish invariant tables on a capped
    account, even when it asks to; the owner role can."""
    owner = Ledger(postgres_ledger)
    owner.set_cap(KEY, 1.0, name="census")
    owner.grant(RELEASER)
    releaser = Ledger(releaser_url(postgres_ledger))
    exact = {"invariants": ["a_by_b"], "allow_invariants": True}
    with pytest.raises(BudgetError, match=r"^This account has a lifetime ε cap.*by the ledger's"):
        charge(releaser, "r-exact", 0.01, name="census", **exact)
    charge(releaser, "r-noisy", 0.01, name="census")  # no invariants: the releaser's to do
    charge(owner, "o-exact", 0.01, name="census", **exact)
    assert [e.release_id for e in owner.entries(KEY)] == ["r-noisy", "o-exact"]
