"""The budget ledger on real SQLite files, with real processes and threads (no mocks)."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError, DPReleaseError, InternalError, LedgerError
from dprelease.ledger.files import dataset_key, dataset_key_of_file, default_ledger_path
from dprelease.ledger.store import AlreadyChargedError, Balance, Ledger
from helpers import ROOT

KEY = dataset_key(b"age,sex\n34,F\n")
OTHER = dataset_key(b"another data set")


def pure(epsilon: float) -> Guarantee:
    return Guarantee(epsilon=epsilon, delta=None)


def charge(ledger: Ledger, release_id: str, guarantee: Guarantee, dataset: str = KEY) -> None:
    with ledger.charge(dataset, release_id, guarantee, label="plan", tables=["sex"]):
        pass


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    """A fresh Python process running `code` against the ledger (argv: the args)."""
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


HOLD = """
import sys
from dprelease.accounting.composition import Guarantee
from dprelease.ledger.store import Ledger
path, key = sys.argv[1:]
with Ledger(path).charge(key, "held", Guarantee(0.5, None), label="p", tables=["t"]):
    print("inside", flush=True)
    sys.stdin.readline()  # hold the charge open until told (or killed)
print("committed", flush=True)
"""

RACE = """
import pathlib, sys, time
from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError
from dprelease.ledger.store import Ledger
path, key, release_id, go = sys.argv[1:]
ledger = Ledger(path)
while not pathlib.Path(go).exists():
    time.sleep(0.002)
try:
    with ledger.charge(key, release_id, Guarantee(0.25, None), label="race", tables=["t"]):
        time.sleep(0.03)  # the release being made, with the lock held
    print("charged")
except BudgetError:
    print("refused")
"""


# --- keys and paths ---------------------------------------------------------------------


def test_dataset_key_is_the_sha256_of_the_bytes(tmp_path):
    data = b"x" * 100_000
    (tmp_path / "d.csv").write_bytes(data)
    assert dataset_key(data) == hashlib.sha256(data).hexdigest()
    assert dataset_key_of_file(tmp_path / "d.csv") == dataset_key(data)


def test_default_path_is_the_env_var_else_a_created_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("DPRELEASE_LEDGER", str(tmp_path / "mine.sqlite"))
    assert default_ledger_path() == tmp_path / "mine.sqlite"
    monkeypatch.delenv("DPRELEASE_LEDGER")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    path = default_ledger_path()
    assert path == tmp_path / "home" / ".dprelease" / "ledger.sqlite"
    assert path.parent.is_dir()
    Ledger(path)  # usable as is


# --- arithmetic ---------------------------------------------------------------------------


def test_charges_add_as_the_decimals_they_read_and_never_pass_the_cap(ledger_at):
    # Issue 37.4: ten charges of 0.1 (a release at ε = 0.1 spends at most 1/10, the decimal)
    # add to exactly 1, which fits a cap of 1.0; as floats they add to 1 + 5.5e-17 and the
    # tenth was refused. The eleventh is refused, and the text never says it would fit.
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 1.0)
    for i in range(10):
        charge(ledger, f"r{i}", pure(0.1))
    with pytest.raises(BudgetError, match=r"needs ε = 1e-9 but only ε = 0 is left") as refused:
        charge(ledger, "r10", pure(1e-9))
    assert str(refused.value).endswith("lower the budget or raise the cap.")
    balance = ledger.balance(KEY)
    assert balance.releases == 10
    assert (balance.spent_epsilon, balance.left_epsilon) == (1.0, 0.0)


def test_charges_that_fill_the_cap_exactly_fit_and_the_next_is_refused(ledger_at):
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 1.25)
    for i in range(10):
        charge(ledger, f"r{i}", pure(0.125))
    assert ledger.balance(KEY) == Balance(1.25, 1e-3, 1.25, 0.0, 10)
    message = (
        "This release needs ε = 0.125 but only ε = 0 is left of the lifetime cap 1.25 for "
        "this data set; lower the budget or raise the cap."
    )
    with pytest.raises(BudgetError) as refused:
        charge(ledger, "r10", pure(0.125))
    assert str(refused.value) == message
    with pytest.raises(BudgetError):
        ledger.check(KEY, pure(0.125))
    assert ledger.balance(KEY).releases == 10


def test_the_brief_message_and_the_delta_cap(ledger_at):
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 1.0, 1e-6)
    charge(ledger, "a", Guarantee(epsilon=0.75, delta=4e-7, composition="basic"))
    charge(ledger, "b", Guarantee(epsilon=0.0625, delta=4e-7, rho=0.001, composition="zcdp"))
    with pytest.raises(BudgetError, match=r"^This release needs ε = 0.5 but only ε = 0.1875 is"):
        ledger.check(KEY, pure(0.5))
    with pytest.raises(BudgetError, match=r"needs δ = 4e-7 but only δ = (2|1\.99\d*)e-7 is left"):
        charge(ledger, "c", Guarantee(epsilon=0.125, delta=4e-7))
    charge(ledger, "c", pure(0.125))  # a pure release spends no δ
    balance = ledger.balance(KEY)
    assert balance.spent_delta >= 8e-7 and balance.releases == 3
    entry = ledger.find("b")
    assert entry is not None and (entry.rho, entry.accounting) == (0.001, "zcdp")


def test_no_cap_then_raise_lower_and_remove(ledger_at):
    ledger = Ledger(ledger_at)
    charge(ledger, "a", pure(5.0))  # no cap: recorded, not limited
    assert ledger.balance(KEY) == Balance(None, 1e-3, 5.0, 0.0, 1)
    assert ledger.balance(KEY).left_epsilon is None
    ledger.set_cap(KEY, 6.0)
    charge(ledger, "b", pure(1.0))
    ledger.set_cap(KEY, 4.0)  # below what is spent: allowed, and nothing more fits
    assert ledger.balance(KEY).left_epsilon == 0.0
    with pytest.raises(BudgetError, match=r"only ε = 0 is left of the lifetime cap 4 "):
        charge(ledger, "c", pure(0.001))
    ledger.set_cap(KEY, 8.0)  # raised again
    charge(ledger, "c", pure(2.0))
    ledger.set_cap(KEY, None)
    assert ledger.balance(KEY).cap_epsilon is None
    assert ledger.balance(OTHER) == Balance(None, 1e-3, 0.0, 0.0, 0)  # data sets are apart


def test_a_cap_set_from_the_dashboard_can_only_be_first_or_lower(ledger_at):
    """Issue 25.11: the dashboard (only_lower) may set a first cap and lower one; raising or
    removing it is refused and names `ledger cap`, which the ledger file's owner runs."""
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 3.0, only_lower=True)  # a first cap
    ledger.set_cap(KEY, 2.0, only_lower=True)  # lowered
    ledger.set_cap(KEY, 2.0, only_lower=True)  # the same: no raise
    for raised in (2.5, None):
        with pytest.raises(BudgetError, match=r"dprelease ledger cap --dataset") as refused:
            ledger.set_cap(KEY, raised, only_lower=True)
        assert "can be lowered here, not raised or removed" in str(refused.value)
    ledger.set_cap(KEY, 2.0, 1e-6, only_lower=True)  # the δ cap lowered (from 1e-3)
    with pytest.raises(BudgetError, match="ledger cap"):
        ledger.set_cap(KEY, 2.0, 1e-4, only_lower=True)  # but not raised
    assert ledger.balance(KEY).cap_epsilon == 2.0 and ledger.balance(KEY).cap_delta == 1e-6
    ledger.set_cap(KEY, 9.0)  # `ledger cap` (the owner of the file) raises it
    assert ledger.balance(KEY).cap_epsilon == 9.0


# --- charged exactly once -------------------------------------------------------------------


def test_a_second_charge_with_the_same_release_id_is_refused(ledger_at):
    ledger = Ledger(ledger_at)
    charge(ledger, "click", pure(0.5))
    with pytest.raises(AlreadyChargedError) as again:
        charge(ledger, "click", pure(0.5))
    assert isinstance(again.value, BudgetError)
    assert again.value.entry == ledger.find("click")
    assert again.value.entry.epsilon == 0.5
    assert ledger.balance(KEY).releases == 1


def test_an_exception_in_the_block_charges_nothing_and_the_release_can_be_retried(ledger_at):
    ledger = Ledger(ledger_at)
    with (
        pytest.raises(OSError, match="disk full"),
        ledger.charge(KEY, "r", pure(0.5), label="p", tables=["t"]),
    ):
        raise OSError("disk full")
    assert ledger.balance(KEY).releases == 0 and ledger.find("r") is None
    with ledger.charge(KEY, "r", pure(0.5), label="census 2020", tables=("a", "b")) as entry:
        assert ledger.find("r") is None  # not visible before the block ends
    assert ledger.find("r") == entry
    assert (entry.label, entry.tables, entry.accounting) == ("census 2020", ("a", "b"), "basic")


def test_the_ledger_persists_and_holds_only_public_facts(tmp_path):
    path = tmp_path / "l.sqlite"
    first = Ledger(path)
    first.set_cap(KEY, 2.0)
    charge(first, "a", pure(0.5))
    charge(first, "b", pure(0.25))
    again = Ledger(path)
    assert again.balance(KEY) == Balance(2.0, 1e-3, 0.75, 0.0, 2)
    assert [e.release_id for e in again.entries(KEY)] == ["a", "b"]
    with sqlite3.connect(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(charges)")}
    conn.close()
    assert columns == {
        "release_id",
        "dataset",
        "epsilon",
        "delta",
        "rho",
        "accounting",
        "label",
        "tables",
        "created",
        "invariants",  # names of tables published exact (issue 27): public
    }


def test_a_process_killed_inside_the_block_charges_nothing(tmp_path):
    path = tmp_path / "l.sqlite"
    Ledger(path).set_cap(KEY, 1.0)
    process = spawn(HOLD, str(path), KEY)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "inside", process.stderr
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    process.communicate()
    after = Ledger(path)  # a restart: opens, recovers, is usable
    assert after.balance(KEY) == Balance(1.0, 1e-3, 0.0, 0.0, 0)
    assert after.find("held") is None
    charge(after, "held", pure(1.0))  # the lock died with the process
    assert after.balance(KEY).releases == 1


# --- concurrency --------------------------------------------------------------------------


def test_racing_processes_never_overspend(tmp_path):
    path, go = tmp_path / "l.sqlite", tmp_path / "go"
    Ledger(path).set_cap(KEY, 0.75)  # room for three charges of 0.25
    processes = [spawn(RACE, str(path), KEY, f"p{i}", str(go)) for i in range(6)]
    time.sleep(0.2)
    go.touch()
    outcomes = sorted(p.communicate(timeout=30)[0].strip() for p in processes)
    assert outcomes == ["charged"] * 3 + ["refused"] * 3, outcomes
    assert Ledger(path).balance(KEY) == Balance(0.75, 1e-3, 0.75, 0.0, 3)


def test_racing_threads_never_overspend_or_double_charge(ledger_at):
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 1.0)
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def release(i: int) -> None:
        start.wait()
        try:
            with ledger.charge(KEY, f"t{i % 4}", pure(0.25), label="p", tables=["t"]):
                time.sleep(0.01)
            outcomes.append("charged")
        except AlreadyChargedError:
            outcomes.append("again")

    threads = [threading.Thread(target=release, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["again"] * 4 + ["charged"] * 4
    assert ledger.balance(KEY) == Balance(1.0, 1e-3, 1.0, 0.0, 4)


def test_readers_are_not_blocked_while_a_charge_is_held_and_writers_wait(tmp_path):
    path = tmp_path / "l.sqlite"
    Ledger(path).set_cap(KEY, 1.0)
    process = spawn(HOLD, str(path), KEY)
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "inside"
        started = time.monotonic()
        reader = Ledger(path, timeout=0.1)  # opening reads only
        assert reader.balance(KEY).releases == 0  # the pending charge is not visible
        assert reader.entries(KEY) == [] and reader.find("held") is None
        reader.check(KEY, pure(1.0))  # advisory: no lock
        assert time.monotonic() - started < 1.0
        with pytest.raises(LedgerError, match="is busy: another release is being charged"):
            charge(reader, "other", pure(0.25))
        with pytest.raises(LedgerError, match="is busy"):
            reader.set_cap(KEY, 2.0)
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "committed"
    finally:
        process.kill()
        process.communicate()
    ledger = Ledger(path)
    assert ledger.balance(KEY).spent_epsilon == 0.5
    with pytest.raises(BudgetError, match=r"only ε = 0\.5 is left"):
        charge(ledger, "other", pure(0.75))


# --- bad files and bad arguments ------------------------------------------------------------


def _corrupt(path: Path) -> None:
    ledger = Ledger(path)
    for i in range(50):
        charge(ledger, f"r{i}", pure(0.01))
    data = bytearray(path.read_bytes())
    data[1024:] = b"\xa5" * (len(data) - 1024)  # keep the header, wreck the pages
    path.write_bytes(bytes(data))


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    conn.close()


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda p: p.write_text("name,age\nAda,36\n"), "is not a readable dprelease ledger"),
        (lambda p: p.write_bytes(os.urandom(4096)), "is not a readable dprelease ledger"),
        (_corrupt, "is not a readable dprelease ledger"),
        (_foreign, "is an SQLite database but not a dprelease ledger"),
        (lambda p: p.mkdir(), "is a folder"),
    ],
    ids=["text", "random-bytes", "corrupt", "another-database", "folder"],
)
def test_a_bad_ledger_file_is_a_one_line_error(tmp_path, make, pattern):
    path = tmp_path / "l.sqlite"
    make(path)
    with pytest.raises(LedgerError, match=pattern) as error:
        Ledger(path).balance(KEY)
    assert "\n" not in str(error.value) and isinstance(error.value, DPReleaseError)


def test_an_unusable_place_is_a_one_line_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(LedgerError, match="does not exist; create it first"):
        Ledger(tmp_path / "missing" / "l.sqlite")
    with pytest.raises(LedgerError, match="does not exist"):
        Ledger(tmp_path / "file" / "l.sqlite")
    with pytest.raises(LedgerError, match="the file and its folder must be writable"):
        Ledger("/proc/dprelease-ledger.sqlite")  # a folder nobody, not even root, writes to


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_is_a_one_line_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    Ledger(folder / "l.sqlite").set_cap(KEY, 1.0)
    folder.chmod(0o500)
    try:
        with pytest.raises(LedgerError, match="the file and its folder must be writable"):
            Ledger(folder / "new.sqlite")
        (folder / "l.sqlite").chmod(0o400)
        with pytest.raises(LedgerError, match="must be writable"):
            Ledger(folder / "l.sqlite").set_cap(KEY, 2.0)
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize(
    ("guarantee", "pattern"),
    [
        (Guarantee(epsilon=None, delta=1e-6), "finite ε ≥ 0"),
        (pure(float("nan")), "finite ε ≥ 0"),
        (pure(-1.0), "finite ε ≥ 0"),
        (Guarantee(epsilon=1.0, delta=2.0), "δ between 0 and 0.001"),
        (Guarantee(epsilon=0.01, delta=0.99), "δ between 0 and 0.001"),
    ],
)
def test_bad_guarantees_are_refused(ledger_at, guarantee, pattern):
    ledger = Ledger(ledger_at)
    with pytest.raises(BudgetError, match=pattern):
        charge(ledger, "r", guarantee)
    with pytest.raises(BudgetError, match=pattern):
        ledger.check(KEY, guarantee)


def test_bad_caps_and_keys_are_refused(ledger_at):
    ledger = Ledger(ledger_at)
    with pytest.raises(BudgetError, match="ε cap must be a finite number"):
        ledger.set_cap(KEY, float("inf"))
    with pytest.raises(BudgetError, match="from 0 to 1000"):  # the Release page's box: the same
        ledger.set_cap(KEY, 1000.5)
    ledger.set_cap(KEY, 1000.0)
    with pytest.raises(BudgetError, match=r"δ cap must lie between 0 and 0\.001"):
        ledger.set_cap(KEY, 1.0, -1e-9)
    with pytest.raises(InternalError, match="64-hex-digit key"):
        ledger.balance("census.csv")  # a file name would open a second account
    with pytest.raises(InternalError, match="not one string"):
        charge_one_string = ledger.charge(KEY, "r", pure(0.1), label="p", tables="sex")
        charge_one_string.__enter__()
