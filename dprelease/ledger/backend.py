"""Where a ledger lives: an SQLite file (a path) or a PostgreSQL database (a
``postgresql://`` URL), behind one small connection interface.

`Conn.execute` takes the ledger's SQL with ``?`` placeholders and returns rows indexable by
column name and by position. A read transaction (`begin_read`) sees one snapshot; a write
transaction (`begin_write`) holds the ledger's single write lock until COMMIT (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: an advisory transaction lock), which is what makes two
concurrent releases unable to overspend. The format number lives in SQLite's header
(``PRAGMA user_version``/``application_id``) or in PostgreSQL's ``ledger_meta`` table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dprelease.errors import LedgerError

APPLICATION_ID = 0x64707265  # "dpre" in the SQLite header: tells our file from any other
URL_PREFIXES = ("postgresql://", "postgres://")


def is_url(location: str | Path) -> bool:
    """Whether a ledger location names a PostgreSQL server (else it is an SQLite path)."""
    return isinstance(location, str) and location.startswith(URL_PREFIXES)


class Conn:
    """One open connection to a ledger (SQLite here; `postgres.PgConn` for PostgreSQL)."""

    kind = "sqlite"
    order = "rowid"  # the column that orders charges oldest first

    def __init__(self, raw: Any, where: str) -> None:  # sqlite3 or psycopg
        self.raw = raw
        self.where = where

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(sql, tuple(params))

    def begin_read(self) -> None:
        self.raw.execute("BEGIN")  # WAL: a snapshot, never blocked by a release in progress

    def begin_write(self) -> None:
        self.raw.execute("BEGIN IMMEDIATE")  # the write lock, held until COMMIT

    def commit(self) -> None:
        self.raw.execute("COMMIT")

    def rollback(self) -> None:
        self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()  # rolls back whatever was not committed

    def is_owner(self) -> bool:
        """Whether this connection may do what only the ledger's owner may (raise a cap,
        allow exact tables on a capped account): for a file, whoever can write it."""
        return True

    # --- the layout's format -------------------------------------------------------------

    def is_empty(self) -> bool:
        app_id = self.raw.execute("PRAGMA application_id").fetchone()[0]
        objects = self.raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return bool(app_id == 0 and objects == 0)

    def lay_out(self, schema: Sequence[str], version: int) -> None:
        for statement in schema:
            self.raw.execute(statement)
        self.raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self.set_version(version)

    def is_ours(self) -> bool:
        return bool(self.raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID)

    def version(self) -> int:
        return int(self.raw.execute("PRAGMA user_version").fetchone()[0])

    def set_version(self, version: int) -> None:
        self.raw.execute(f"PRAGMA user_version = {int(version)}")

    def intact(self) -> bool:
        return bool(self.raw.execute("PRAGMA quick_check").fetchone()[0] == "ok")

    def add_column(self, statement: str) -> None:
        self.raw.execute(statement)


class SqliteBackend:
    """An SQLite ledger file: WAL (readers never wait), synchronous=FULL (a commit is on
    disk when it returns). WAL needs a local file system (not a network share)."""

    def __init__(self, path: str | Path, timeout: float) -> None:
        self.path = Path(path).expanduser()
        self.timeout = timeout
        self.where = str(self.path)
        if self.path.is_dir():
            raise LedgerError(f"The ledger path '{self.path}' is a folder; give a file path.")
        if not self.path.parent.is_dir():
            raise LedgerError(
                f"The folder '{self.path.parent}' for the ledger does not exist; create it first."
            )

    def damaged(self, why: str) -> str:
        return (
            f"The ledger '{self.where}' is not a readable dprelease ledger ({why}); "
            "restore it from a backup or choose another path."
        )

    def error(self, error: BaseException) -> LedgerError | None:
        """One line the user can act on, for an SQLite failure (None: not ours)."""
        if not isinstance(error, sqlite3.Error):
            return None
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary result code
        why = str(error).splitlines()[0] if str(error) else type(error).__name__
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return LedgerError(
                f"The ledger '{self.where}' is busy: another release is being charged; "
                "try again in a moment."
            )
        if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return LedgerError(self.damaged(why))
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
            return LedgerError(
                f"Cannot write the ledger '{self.where}' ({why}); the file and its folder "
                "must be writable."
            )
        return LedgerError(f"The ledger '{self.where}' cannot be used ({why}).")

    def not_ours(self) -> str:
        return (
            f"'{self.where}' is an SQLite database but not a dprelease ledger; choose another path."
        )

    @contextmanager
    def guard(self) -> Iterator[None]:
        try:
            yield
        except Exception as error:  # only the backend's own errors are mapped
            mapped = self.error(error)
            if mapped is None:
                raise
            raise mapped from None

    @contextmanager
    def connect(self) -> Iterator[Conn]:
        with self.guard():
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so the lock is explicit.
            raw = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        conn = Conn(raw, self.where)
        try:
            raw.row_factory = sqlite3.Row
            with self.guard():
                raw.execute("PRAGMA journal_mode = WAL")
                raw.execute("PRAGMA synchronous = FULL")
            yield conn
        finally:
            conn.close()

    def grant(self, role: str) -> None:
        raise LedgerError(
            "Roles are for a PostgreSQL ledger; who may release to an SQLite ledger is "
            "whoever may write its file."
        )
