"""The ledger's accounts: which account a release of some records is charged to.

An account has a key (the fingerprint of the first records charged to it, or the SHA-256 of a
file's bytes in a format-1 ledger) and an optional name (the plan's `dataset:`). The table
`records` maps every other key of records charged to an account onto its key: other
fingerprints, the key of only the columns a plan read (so a column the plan does not read may
be added or dropped), a format-3 (v1) fingerprint. `sketches` keeps keyed sketches of the rows
(`dprelease.ledger.sketches`), by which near-duplicates (a few rows added or removed) are
found. A name is bound to its records: other records under a name are refused, so that a name
typed in the dashboard shows and spends nothing of another data set. The functions take an
open connection inside the caller's transaction, so resolving and charging see one snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from dprelease.accounting.composition import decimal_cover
from dprelease.errors import BudgetError, InternalError
from dprelease.ledger.backend import Conn
from dprelease.ledger.sketches import SECRET_TABLE, SKETCH_TABLE, keep, near_duplicate_of
from dprelease.ledger.values import Account
from dprelease.plan.names import is_dataset_name

KEY = re.compile(r"[0-9a-f]{64}")
FORMAT = 5  # PRAGMA user_version of the layout below (1: no accounts or records tables;
# 2: no `invariants` column on charges, issue 27; 3: no sketches, secret or linked, issue 34;
# 4: charges bounded as binary floats only, not as the decimals they print as, issue 37.4)
ACCOUNTS = (
    "CREATE TABLE accounts (dataset TEXT PRIMARY KEY, name TEXT UNIQUE, created TEXT NOT NULL)",
    "CREATE TABLE records (fingerprint TEXT PRIMARY KEY, dataset TEXT NOT NULL)",
)
KEYS_V2 = (
    SECRET_TABLE,
    SKETCH_TABLE,
    # accounts that hold a key of the format-4 fingerprint: the others still need the old one
    "CREATE TABLE linked (dataset TEXT PRIMARY KEY)",
)
SCHEMA = (
    "CREATE TABLE caps (dataset TEXT PRIMARY KEY, epsilon REAL, delta REAL, updated TEXT NOT NULL)",
    "CREATE TABLE charges (release_id TEXT PRIMARY KEY, dataset TEXT NOT NULL,"
    " epsilon REAL NOT NULL, delta REAL NOT NULL, rho REAL, accounting TEXT NOT NULL,"
    " label TEXT NOT NULL, tables TEXT NOT NULL, created TEXT NOT NULL, invariants TEXT)",
    "CREATE INDEX charges_by_dataset ON charges (dataset)",
    *ACCOUNTS,
    *KEYS_V2,
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


def known(conn: Conn, key: str) -> bool:
    return any(
        conn.execute(f"SELECT 1 FROM {table} WHERE dataset = ? LIMIT 1", (key,)).fetchone()
        for table in ("accounts", "charges", "caps")
    )


def key_of(conn: Conn, dataset: str) -> str:
    """The account a key belongs to: itself, or the account its records were charged to."""
    row = conn.execute("SELECT dataset FROM records WHERE fingerprint = ?", (dataset,))
    found = row.fetchone()
    return str(found["dataset"]) if found else dataset


def name_of(conn: Conn, key: str) -> str | None:
    row = conn.execute("SELECT name FROM accounts WHERE dataset = ?", (key,)).fetchone()
    return None if row is None else row["name"]


def _first_known(conn: Conn, keys: Sequence[str | None]) -> str | None:
    """The account of the first of these keys of the records that the ledger knows."""
    for key in keys:
        if key is None:
            continue
        account = key_of(conn, key)
        if known(conn, account):
            return account
    return None


def _label(name: str | None, key: str) -> str:
    return f"'{name}'" if name else f"the account {key[:12]}…"


def resolve(
    conn: Conn,
    records: str,
    name: str | None,
    legacy: str | None,
    aliases: Sequence[str] = (),
    sketch: Sequence[int] = (),
) -> Account:
    """The account a release of these records is charged to. `aliases` are other keys of the
    same records (the read columns' key, a format-3 fingerprint), `legacy` the file's SHA-256
    (format 1), `sketch` the rows' bottom-k sketch (empty when it does not identify them).

    Refused (BudgetError, one line, no value): the records belong to one account and the name
    to another; the name belongs to an account of other records; the records are a
    near-duplicate of an account other than the one named."""
    check_key(records)
    for alias in aliases:
        check_key(alias)
    check_name(name)
    by_records = _first_known(conn, (records, *aliases, legacy))
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
    notice = None
    if by_records is None:
        near = near_duplicate_of(conn, sketch)
        near_name = None if near is None else name_of(conn, near)
        named_elsewhere = by_name not in (None, near) or near_name not in (None, name)
        if near is not None and name is not None and named_elsewhere:
            raise BudgetError(
                f"These records are nearly the same as those of {_label(near_name, near)} (a "
                f"few rows added or removed), not of the account '{name}' the plan names; "
                + (f"name '{near_name}'" if near_name else "remove `dataset:`")
                + " to charge them there."
            )
        if near is None and by_name is not None:
            raise BudgetError(
                f"The account '{name}' holds other records: a data set's name is bound to its "
                "records; choose another name for these, or remove `dataset:`."
            )
        if near is not None:
            by_records, old_name = near, near_name
            notice = (
                f"These records are nearly the same as those of {_label(old_name, near)} (a "
                "few rows added or removed): they are charged to that account."
            )
    key = by_name or by_records or records
    if (
        notice is None
        and by_records is not None
        and name is not None
        and old_name
        not in (
            None,
            name,
        )
    ):
        notice = (
            f"These records were charged before as '{old_name}'; this release is charged "
            f"to that account, not to a new one named '{name}'."
        )
    return Account(key, old_name or name, notice)


def register(
    conn: Conn,
    account: Account,
    records: str | None = None,
    aliases: Sequence[str] = (),
    sketch: Sequence[int] = (),
) -> None:
    """Record the account (and its name), map the records' keys onto it and keep their sketch;
    inside a write transaction."""
    # Only the columns a releaser may write (PostgreSQL: naming is the owner's, by GRANT).
    conn.execute(
        "INSERT INTO accounts (dataset, created) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (account.key, now()),
    )
    if account.name is not None and name_of(conn, account.key) is None:
        conn.execute(
            "UPDATE accounts SET name = ? WHERE dataset = ? AND name IS NULL",
            (account.name, account.key),
        )
    for key in (records, *aliases):
        if key is not None and key != account.key:
            conn.execute(
                "INSERT INTO records VALUES (?, ?) ON CONFLICT DO NOTHING", (key, account.key)
            )
    if records is not None:
        keep(conn, records, account.key, sketch)
        # the account now holds a format-4 key: old fingerprints are no longer needed for it
        conn.execute("INSERT INTO linked VALUES (?) ON CONFLICT DO NOTHING", (account.key,))


def needs_old_keys(conn: Conn) -> bool:
    """Whether an account was charged or capped before format 4 and holds no key of the
    format-4 fingerprint yet: then a release also computes the format-3 fingerprint, to find
    it (`dprelease.data.fingerprint`'s legacy key)."""
    query = (
        "SELECT 1 FROM (SELECT dataset FROM charges UNION SELECT dataset FROM caps"
        " UNION SELECT dataset FROM accounts) AS every"
        " WHERE dataset NOT IN (SELECT dataset FROM linked) LIMIT 1"
    )
    return conn.execute(query).fetchone() is not None


def upgrade(conn: Conn) -> None:
    """Format 1 → 2: add the accounts and records tables; old keys stay account keys.
    Format 2 → 3: add the charges' `invariants` column (NULL: the release held none).
    Format 3 → 4: add the secret, sketches and linked tables (old accounts are not linked:
    releases find them by their format-3 fingerprint until they are).
    Format 4 → 5: the ledger now adds charges as the decimals they print as (issue 37.4); an
    older charge bounded its spend only as a binary float (0.4's float is above 2/5), so each
    stored ε, δ and ρ is raised to the nearest float whose decimal also bounds it."""
    if conn.version() >= FORMAT:
        return
    conn.begin_write()
    version = conn.version()  # another may have won
    if version < 2:
        for statement in ACCOUNTS:
            conn.execute(statement)
    if version < 3:
        conn.execute("ALTER TABLE charges ADD COLUMN invariants TEXT")
    if version < 4:
        for statement in KEYS_V2:
            conn.execute(statement)
    if version < 5:
        _decimal_charges(conn)
    conn.set_version(FORMAT)
    conn.commit()


def _decimal_charges(conn: Conn) -> None:
    rows = conn.execute("SELECT release_id, epsilon, delta, rho FROM charges").fetchall()
    for row in rows:
        old = (row["epsilon"], row["delta"], row["rho"])
        new = tuple(None if v is None else decimal_cover(v) for v in old)
        if new != old:
            conn.execute(
                "UPDATE charges SET epsilon = ?, delta = ?, rho = ? WHERE release_id = ?",
                (*new, row["release_id"]),
            )


def find_account(conn: Conn, text: str) -> str | None:
    """The account key for a key, a records fingerprint or an account name (or None)."""
    row = conn.execute("SELECT dataset FROM accounts WHERE name = ?", (text,)).fetchone()
    if row is not None:
        return str(row["dataset"])
    if not KEY.fullmatch(text):
        return None
    key = key_of(conn, text)
    return key if known(conn, key) else None


def all_accounts(conn: Conn) -> list[tuple[str, str | None]]:
    """Every account (key, name), in the order of its first charge, then cap, then name."""
    first: dict[str, tuple[int, int]] = {}
    queries = (
        f"SELECT dataset, {conn.order} AS pos FROM charges ORDER BY {conn.order}",
        "SELECT dataset, 0 AS pos FROM caps",
        "SELECT dataset, 0 AS pos FROM accounts",
    )
    for rank, query in enumerate(queries):
        for row in conn.execute(query).fetchall():
            first.setdefault(str(row["dataset"]), (rank, int(row["pos"])))
    keys = sorted(first, key=first.__getitem__)
    return [(key, name_of(conn, key)) for key in keys]
