"""The ledger's accounts: which account a release of some records is charged to.

An account has a key (the fingerprint of the first records charged to it, or the SHA-256 of a
file's bytes in a format-1 ledger) and an optional name (the plan's `dataset:`). The table
`records` maps every other fingerprint charged to an account onto its key. The functions take
an open connection inside the caller's transaction, so resolving and charging see one snapshot.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime

from dprelease.errors import BudgetError, InternalError
from dprelease.ledger.values import Account
from dprelease.plan.names import is_dataset_name

KEY = re.compile(r"[0-9a-f]{64}")
FORMAT = 3  # PRAGMA user_version of the layout below (1: no accounts or records tables;
# 2: no `invariants` column on charges, issue 27)
ACCOUNTS = (
    "CREATE TABLE accounts (dataset TEXT PRIMARY KEY, name TEXT UNIQUE, created TEXT NOT NULL)",
    "CREATE TABLE records (fingerprint TEXT PRIMARY KEY, dataset TEXT NOT NULL)",
)
SCHEMA = (
    "CREATE TABLE caps (dataset TEXT PRIMARY KEY, epsilon REAL, delta REAL, updated TEXT NOT NULL)",
    "CREATE TABLE charges (release_id TEXT PRIMARY KEY, dataset TEXT NOT NULL,"
    " epsilon REAL NOT NULL, delta REAL NOT NULL, rho REAL, accounting TEXT NOT NULL,"
    " label TEXT NOT NULL, tables TEXT NOT NULL, created TEXT NOT NULL, invariants TEXT)",
    "CREATE INDEX charges_by_dataset ON charges (dataset)",
    *ACCOUNTS,
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_key(dataset: str) -> None:
    # A file name or path here would silently open a second account for the same data.
    if not KEY.fullmatch(dataset):
        raise InternalError("a ledger data set must be a 64-hex-digit key (fingerprint or SHA-256)")


def check_name(name: str | None) -> None:
    if name is not None and not is_dataset_name(name):
        raise BudgetError(
            "A data set name must be 1 to 200 printable characters on one line "
            "(e.g. dataset: census-2020)."
        )


def known(conn: sqlite3.Connection, key: str) -> bool:
    return any(
        conn.execute(f"SELECT 1 FROM {table} WHERE dataset = ? LIMIT 1", (key,)).fetchone()
        for table in ("accounts", "charges", "caps")
    )


def key_of(conn: sqlite3.Connection, dataset: str) -> str:
    """The account a key belongs to: itself, or the account its records were charged to."""
    row = conn.execute("SELECT dataset FROM records WHERE fingerprint = ?", (dataset,))
    found = row.fetchone()
    return str(found["dataset"]) if found else dataset


def name_of(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT name FROM accounts WHERE dataset = ?", (key,)).fetchone()
    return None if row is None else row["name"]


def resolve(
    conn: sqlite3.Connection, records: str, name: str | None, legacy: str | None
) -> Account:
    check_key(records)
    check_name(name)
    by_records: str | None = key_of(conn, records)
    if by_records == records and not known(conn, records):
        by_records = legacy if legacy is not None and known(conn, legacy) else None
    by_name = None
    if name is not None:
        row = conn.execute("SELECT dataset FROM accounts WHERE name = ?", (name,)).fetchone()
        by_name = None if row is None else str(row["dataset"])
    old_name = None if by_records is None else name_of(conn, by_records)
    if by_records is not None and by_name is not None and by_records != by_name:
        raise BudgetError(
            f"These records were charged before as '{old_name or by_records[:12]}', but the "
            f"plan names the account '{name}', which holds other records; remove `dataset:` "
            f"or name '{old_name or by_records[:12]}'."
        )
    key = by_name or by_records or records
    notice = None
    if by_records is not None and name is not None and old_name not in (None, name):
        notice = (
            f"These records were charged before as '{old_name}'; this release is charged "
            f"to that account, not to a new one named '{name}'."
        )
    elif by_name is not None and by_records is None:
        notice = (
            f"These records differ from those charged before as '{name}'; they share its "
            "account because the plan names it."
        )
    return Account(key, old_name or name, notice)


def register(conn: sqlite3.Connection, account: Account, records: str | None = None) -> None:
    conn.execute("INSERT OR IGNORE INTO accounts VALUES (?, NULL, ?)", (account.key, now()))
    if account.name is not None:
        conn.execute(
            "UPDATE accounts SET name = ? WHERE dataset = ? AND name IS NULL",
            (account.name, account.key),
        )
    if records is not None and records != account.key:
        conn.execute("INSERT OR IGNORE INTO records VALUES (?, ?)", (records, account.key))


def upgrade(conn: sqlite3.Connection) -> None:
    """Format 1 → 2: add the accounts and records tables; old keys stay account keys.
    Format 2 → 3: add the charges' `invariants` column (NULL: the release held none)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= FORMAT:
        return
    conn.execute("BEGIN IMMEDIATE")
    version = conn.execute("PRAGMA user_version").fetchone()[0]  # another may have won
    if version < 2:
        for statement in ACCOUNTS:
            conn.execute(statement)
    if version < 3:
        conn.execute("ALTER TABLE charges ADD COLUMN invariants TEXT")
    conn.execute(f"PRAGMA user_version = {FORMAT}")
    conn.execute("COMMIT")


def find_account(conn: sqlite3.Connection, text: str) -> str | None:
    """The account key for a key, a records fingerprint or an account name (or None)."""
    row = conn.execute("SELECT dataset FROM accounts WHERE name = ?", (text,)).fetchone()
    if row is not None:
        return str(row["dataset"])
    if not KEY.fullmatch(text):
        return None
    key = key_of(conn, text)
    return key if known(conn, key) else None


def all_accounts(conn: sqlite3.Connection) -> list[tuple[str, str | None]]:
    """Every account (key, name), in the order of its first charge, then cap, then name."""
    query = (
        "SELECT dataset, min(rowid) AS first FROM ("
        " SELECT dataset, rowid FROM charges UNION ALL SELECT dataset, 1e18 FROM caps"
        " UNION ALL SELECT dataset, 2e18 FROM accounts) GROUP BY dataset ORDER BY first"
    )
    keys = [str(row["dataset"]) for row in conn.execute(query).fetchall()]
    return [(key, name_of(conn, key)) for key in keys]
