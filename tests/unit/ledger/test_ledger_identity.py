"""An account follows the records (issue 34, point 2, the ledger's side): other keys of the same
records, near-duplicates found by a keyed sketch, format-3 accounts linked to their new keys."""

from __future__ import annotations

import random
import sqlite3

import pytest

from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError
from dprelease.ledger.sketches import (
    SKETCH_SIZE,
    distinct_estimate,
    identifying,
)
from dprelease.ledger.store import Ledger

A, B, C, READ = "a" * 64, "b" * 64, "c" * 64, "d" * 64


def rows(n: int, seed: int) -> list[int]:
    generator = random.Random(seed)
    return [generator.getrandbits(64) for _ in range(n)]


def bottom_k(hashes: list[int]) -> tuple[int, ...]:
    return tuple(sorted(set(hashes))[:SKETCH_SIZE])


def charge(ledger: Ledger, release_id: str, key: str, **kw) -> None:
    with ledger.charge(key, release_id, Guarantee(1.0, None), label="p", tables=["t"], **kw):
        pass


def test_another_key_of_the_same_records_finds_their_account(ledger_at):
    # The key of only the columns the plan reads: a column it does not read was added.
    ledger = Ledger(ledger_at)
    ledger.set_cap(A, 1.5, aliases=(READ,))
    charge(ledger, "r1", A, aliases=(READ,))
    assert ledger.account(B, aliases=(READ,)).key == A
    with pytest.raises(BudgetError, match=r"only ε = 0\.5 is left"):
        charge(ledger, "r2", B, aliases=(READ,))


def test_near_duplicates_are_charged_to_their_account_and_refused_under_another_name(ledger_at):
    ledger = Ledger(ledger_at)
    people = rows(50_000, 1)
    ledger.set_cap(A, 1.5, name="census-2020", sketch=bottom_k(people))
    charge(ledger, "r1", A, name="census-2020", sketch=bottom_k(people))
    # A few rows removed and added: another fingerprint, nearly the same sketch.
    changed = people[:-30] + rows(20, 2)
    sketch = bottom_k(changed)
    with pytest.raises(BudgetError) as refused:
        ledger.account(B, "census-2020-fixed", sketch=sketch)
    message = str(refused.value)
    assert "nearly the same as those of 'census-2020'" in message
    assert "\n" not in message and str(sketch[0]) not in message
    # Under its own name, or no name, they are charged to that account.
    assert ledger.account(B, "census-2020", sketch=sketch).key == A
    nameless = ledger.account(B, sketch=sketch)
    assert nameless.key == A and nameless.notice and "nearly the same" in nameless.notice
    with pytest.raises(BudgetError, match=r"only ε = 0\.5 is left"):
        charge(ledger, "r2", B, sketch=sketch)


def test_different_records_are_not_near_duplicates(ledger_at):
    ledger = Ledger(ledger_at)
    charge(ledger, "r1", A, name="one", sketch=bottom_k(rows(50_000, 1)))
    other = ledger.account(B, "two", sketch=bottom_k(rows(50_000, 3)))
    assert other.key == B and other.notice is None


def test_the_ledger_keeps_the_sketch_only_keyed_by_its_secret(tmp_path):
    path = tmp_path / "l.sqlite"
    ledger = Ledger(path)
    sketch = bottom_k(rows(10_000, 4))
    charge(ledger, "r1", A, sketch=sketch)
    with sqlite3.connect(path) as conn:
        stored = conn.execute("SELECT sketch FROM sketches").fetchone()[0]
        secret = conn.execute("SELECT value FROM secret").fetchone()[0]
    conn.close()
    assert len(secret) == 64
    for value in sketch:  # no row hash can be checked against the file without the secret
        assert str(value) not in stored and f"{value:016x}" not in stored
    # A second ledger has its own secret: the same records give other stored values.
    other_path = tmp_path / "m.sqlite"
    charge(Ledger(other_path), "r1", A, sketch=sketch)
    with sqlite3.connect(other_path) as conn:
        assert conn.execute("SELECT sketch FROM sketches").fetchone()[0] != stored
    conn.close()


def test_a_sketch_identifies_records_only_when_rows_are_nearly_all_distinct():
    unique = rows(100_000, 5)
    assert distinct_estimate(bottom_k(unique)) == pytest.approx(100_000, rel=0.3)
    assert identifying(bottom_k(unique), 100_000)
    few_kinds = [value % 300 for value in unique]  # 300 kinds of row among 100,000
    assert not identifying(bottom_k([hash((v, 7)) & (2**64 - 1) for v in few_kinds]), 100_000)


def test_an_upgraded_ledger_asks_for_old_keys_until_its_accounts_are_linked(tmp_path):
    path = tmp_path / "l.sqlite"
    ledger = Ledger(path)
    assert not ledger.needs_old_keys()
    charge(ledger, "r1", A)
    assert not ledger.needs_old_keys()  # charged with a format-4 key: linked
    with sqlite3.connect(path) as conn:  # as a format-3 ledger left it
        for table in ("secret", "sketches", "linked"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("PRAGMA user_version = 3")
    conn.close()
    upgraded = Ledger(path)
    assert upgraded.needs_old_keys()
    # A release computes the format-3 key too, finds the account by it, and links it.
    charge(upgraded, "r2", C, aliases=(A,))
    assert upgraded.balance(C).releases == 2 and upgraded.account(C).key == A
    assert not upgraded.needs_old_keys()
