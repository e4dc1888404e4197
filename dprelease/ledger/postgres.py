"""A ledger in a PostgreSQL database, shared by a team (``postgresql://USER@HOST:PORT/DB``).

The same guarantees as the SQLite file: a write transaction takes one transaction-scoped
advisory lock (per schema) right after BEGIN, so the cap check, the charge and the caller's
release happen while no other release can charge; a client killed before COMMIT leaves its
transaction to be rolled back by the server. Reads take a REPEATABLE READ snapshot and never
wait.

Roles are enforced by the database, not only here: the role that created the tables owns them
(sets and raises caps, names accounts, grants); `grant` lets another role release (insert
charges, link records, lower a cap). A trigger on `caps` refuses a raise by anyone but the
owner, so a releaser's own SQL cannot raise a cap either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from dprelease.errors import LedgerError
from dprelease.ledger.backend import Conn
from dprelease.ledger.values import DEFAULT_DELTA_CAP

LOCK_KEY = 0x64707265  # "dpre": with the schema's hash, the ledger's one write lock
APPLICATION = "dprelease"
TABLES = ("ledger_meta", "caps", "charges", "accounts", "records", "secret", "sketches", "linked")
_GUARD = f"""
CREATE FUNCTION ledger_caps_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner name := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID);
    old_eps double precision;
    old_delta double precision := {DEFAULT_DELTA_CAP!r};
    new_eps double precision;
    new_delta double precision := {DEFAULT_DELTA_CAP!r};
BEGIN
    IF pg_has_role(current_user, owner, 'USAGE') THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        old_eps := OLD.epsilon;
        old_delta := coalesce(OLD.delta, old_delta);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_eps := NEW.epsilon;
        new_delta := coalesce(NEW.delta, new_delta);
    END IF;
    IF (old_eps IS NOT NULL AND (new_eps IS NULL OR new_eps > old_eps))
            OR new_delta > old_delta THEN
        RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = format(
            'Only the ledger''s owner (role %s) can raise or remove a cap; other roles '
            'may lower it. Ask them to run `dprelease ledger cap`.', owner);
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END $$
"""
_LAYOUT = (
    "CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    _GUARD,
    "CREATE TRIGGER caps_guard BEFORE INSERT OR UPDATE OR DELETE ON caps"
    " FOR EACH ROW EXECUTE FUNCTION ledger_caps_guard()",
)


class _Row(tuple[Any, ...]):
    """A row indexable by position and by column name, like sqlite3.Row."""

    names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.names)


def _rows(cursor: Any) -> Any:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}

    def make(values: Sequence[Any]) -> _Row:
        row = _Row(values)
        row.names = names
        return row

    return make


def _portable(statement: str) -> str:
    """The SQLite layout in PostgreSQL: REAL is 4 bytes there, and charges need an explicit
    ordering column (no rowid)."""
    statement = statement.replace(" REAL", " DOUBLE PRECISION")
    if statement.startswith("CREATE TABLE charges "):
        statement = statement[:-1] + ", seq BIGSERIAL NOT NULL)"
    return statement


class PgConn(Conn):
    kind = "postgresql"
    order = "seq"

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        if not params:
            return self.raw.execute(statement)
        # the ledger's SQL has `?` placeholders and no `%` or `?` in literals
        return self.raw.execute(statement.replace("%", "%%").replace("?", "%s"), tuple(params))

    def begin_read(self) -> None:
        self.raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")

    def begin_write(self) -> None:
        # READ COMMITTED: after the lock, each statement sees the previous holder's charges.
        self.raw.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        self.raw.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", (LOCK_KEY,)
        )

    def is_owner(self) -> bool:
        """A member of the role that owns the ledger's tables (as the caps guard decides)."""
        row = self.raw.execute(
            "SELECT pg_has_role(current_user, pg_get_userbyid(relowner), 'USAGE')"
            " FROM pg_class WHERE oid = to_regclass('caps')"
        ).fetchone()
        return bool(row and row[0])

    def is_empty(self) -> bool:
        row = self.raw.execute(
            "SELECT to_regclass('ledger_meta') IS NULL AND to_regclass('charges') IS NULL"
        ).fetchone()
        return bool(row[0])

    def lay_out(self, schema: Sequence[str], version: int) -> None:
        for statement in schema:
            self.raw.execute(_portable(statement))
        for statement in _LAYOUT:
            self.raw.execute(statement)
        self.raw.execute(
            "INSERT INTO ledger_meta VALUES ('application', %s), ('format', %s)",
            (APPLICATION, str(version)),
        )

    def is_ours(self) -> bool:
        if self.raw.execute("SELECT to_regclass('ledger_meta')").fetchone()[0] is None:
            return False
        row = self.raw.execute("SELECT value FROM ledger_meta WHERE key = 'application'")
        found = row.fetchone()
        return found is not None and found[0] == APPLICATION

    def version(self) -> int:
        row = self.raw.execute("SELECT value FROM ledger_meta WHERE key = 'format'").fetchone()
        return int(row[0])

    def set_version(self, version: int) -> None:
        self.raw.execute(
            "UPDATE ledger_meta SET value = %s WHERE key = 'format'", (str(int(version)),)
        )

    def intact(self) -> bool:
        return True  # the server keeps its own integrity


class PostgresBackend:
    """A ledger in the current schema of a PostgreSQL database."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        try:
            params = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error as error:
            raise LedgerError(
                f"The ledger URL is not valid ({_first_line(error)}); write it as "
                "postgresql://USER@HOST:PORT/DATABASE."
            ) from None
        # the URL without its password: shown in messages and `ledger show`
        host = params.get("host") or "localhost"
        port = f":{params['port']}" if params.get("port") else ""
        user = f"{params['user']}@" if params.get("user") else ""
        self.where = f"postgresql://{user}{host}{port}/{params.get('dbname') or ''}"
        self.path = self.where
        self.owner: str | None = None

    def damaged(self, why: str) -> str:
        return f"The ledger '{self.where}' is not a readable dprelease ledger ({why})."

    def not_ours(self) -> str:
        return (
            f"The database '{self.where}' holds tables that are not a dprelease ledger; "
            "choose another database or schema."
        )

    def error(self, error: BaseException) -> LedgerError | None:
        if not isinstance(error, psycopg.Error):
            return None
        why = _first_line(error)
        state = error.sqlstate or ""
        owner = f"role {self.owner}" if self.owner else "the role that created it"
        if state == "55P03" or state in ("40001", "40P01"):
            return LedgerError(
                f"The ledger '{self.where}' is busy: another release is being charged; "
                "try again in a moment."
            )
        if state == "42501" and why.startswith("Only the ledger"):
            return LedgerError(why)
        if state == "42501" and "accounts" in why:
            return LedgerError(
                f"Only the ledger's owner ({owner}) can name a data set; ask them to run a "
                "release with this name first, or remove `dataset:`."
            )
        if state in ("42501", "3F000"):  # 3F000: the schema is not ours to see
            return LedgerError(
                f"Permission denied on the ledger '{self.where}' ({why}); its owner ({owner}) "
                "grants the right to release with `dprelease ledger grant ROLE`."
            )
        if isinstance(error, psycopg.OperationalError):
            return LedgerError(_unreachable(self.where, why))
        return LedgerError(f"The ledger '{self.where}' cannot be used ({why}).")

    @contextmanager
    def guard(self) -> Iterator[None]:
        try:
            yield
        except Exception as error:  # only psycopg's errors are mapped
            mapped = self.error(error)
            if mapped is None:
                raise
            raise mapped from None

    @contextmanager
    def connect(self) -> Iterator[PgConn]:
        try:
            # autocommit: we issue BEGIN/COMMIT ourselves, so the lock is explicit
            raw = psycopg.connect(self.url, autocommit=True, row_factory=_rows, connect_timeout=10)
        except psycopg.Error as error:
            raise LedgerError(_unreachable(self.where, _first_line(error))) from None
        conn = PgConn(raw, self.where)
        try:
            with self.guard():
                # one round trip: how long a release waits for another's lock, and the owner
                row = raw.execute(
                    "SELECT set_config('lock_timeout', %s, false),"
                    " (SELECT pg_get_userbyid(relowner) FROM pg_class"
                    "  WHERE oid = to_regclass('ledger_meta'))",
                    (f"{int(self.timeout * 1000)}ms",),
                ).fetchone()
                self.owner = (row[1] if row else None) or self.owner
            yield conn
        finally:
            raw.close()  # the server rolls back whatever was not committed

    def grant(self, role: str) -> None:
        """Let `role` release to this ledger and lower caps (the owner only)."""
        with self.connect() as conn, self.guard():
            conn.begin_write()
            mine = conn.raw.execute(
                "SELECT pg_has_role(current_user, %s, 'USAGE')", (self.owner,)
            ).fetchone()[0]
            if not mine:
                raise LedgerError(
                    f"Only the ledger's owner (role {self.owner}) can grant the right to release."
                )
            known = conn.raw.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            if known.fetchone() is None:
                raise LedgerError(
                    f"No role '{role}' on the server; create it first "
                    f"(CREATE ROLE \"{role}\" LOGIN PASSWORD '…')."
                )
            names = {
                "who": sql.Identifier(role),
                "schema": sql.Identifier(conn.raw.execute("SELECT current_schema()").fetchone()[0]),
                "tables": sql.SQL(", ").join(sql.Identifier(table) for table in TABLES),
            }
            for statement in (
                "GRANT USAGE ON SCHEMA {schema} TO {who}",
                "GRANT SELECT ON {tables} TO {who}",
                "GRANT INSERT ON charges, records, secret, sketches, linked TO {who}",
                # an account, but not its name: naming is the owner's
                "GRANT INSERT (dataset, created) ON accounts TO {who}",
                # lowering a cap; the trigger caps_guard refuses a raise
                "GRANT INSERT, UPDATE, DELETE ON caps TO {who}",
                "GRANT USAGE ON SEQUENCE charges_seq_seq TO {who}",
            ):
                conn.raw.execute(sql.SQL(statement).format(**names))
            conn.commit()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


def _unreachable(where: str, why: str) -> str:
    """One line for a failed connection: which of the usual causes, and what to do."""
    lower = why.lower()
    if "password" in lower or "authentication" in lower:
        return f"The server refused the login for '{where}' ({why}); check role and password."
    if "does not exist" in lower and "database" in lower:
        return f"The ledger database of '{where}' does not exist ({why}); create it first."
    if "permission denied" in lower:
        return f"Permission denied for the ledger '{where}' ({why})."
    return f"The ledger server of '{where}' cannot be reached ({why})."
