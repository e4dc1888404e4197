"""The budget ledger: what each data set has spent over its lifetime, against a cap.

One SQLite file (stdlib `sqlite3`), or for a team one PostgreSQL database
(`dprelease.ledger.postgres`, a ``postgresql://`` URL; `dprelease.ledger.backend` is the
connection layer both share), holds, per data set (an *account*), every charged release
and a lifetime cap on ε (optional) and δ (1e-3, `DEFAULT_DELTA_CAP`, unless one is set).

Accounts follow the parsed records, not the file's bytes (`dprelease.ledger.accounts`, with
names and the upgrade of format-1 ledgers). Each charge keeps its privacy curve (ε, δ and, for
zCDP, ρ); an account's releases compose by the tightest valid rule of a privacy filter
(`dprelease.ledger.lifetime`: pure ε summed, zCDP ρ added and converted once, (ε, δ) summed),
with exact sums (`Fraction`) rounded up, so floating-point addition can never under-count
(ten charges of the float 0.1 add up to slightly more than 1, and a cap of 1.0 refuses the
tenth). `Balance.spent_*` keeps the plain sums for the record.

How a release is charged exactly once:

- `charge()` opens a write transaction (``BEGIN IMMEDIATE``; PostgreSQL: an advisory lock),
  refuses a `release_id` it has seen (`AlreadyChargedError`), checks the cap, inserts the entry
  and yields. The caller makes the release inside the block; on a normal exit the transaction
  commits, on an exception (or a crash, or a kill) it never commits, so nothing is charged.
  Holding the write lock across check → work → commit is what makes two concurrent releases
  unable to overspend: the second waits (busy timeout) and then sees the first's charge.
- The caller hands the release out only after the block: a crash between the commit and the
  hand-out leaves a release charged but not delivered, which is the safe direction.
- SQLite: WAL journal mode, so that readers (`balance`, `entries`, `check`) are never blocked by a
  release in progress; ``synchronous=FULL``, so that a committed charge survives power loss.
  WAL needs a local file system (not a network share).

A cap may be lowered below what is spent (a steward may tighten policy): nothing more fits.

The ledger stores public facts only: ε, δ, ρ, the accounting, a label (the plan's name or
summary), table names, the names of tables published exact (invariants) and times. Never a
data value, a count, a row count or a seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dprelease.accounting.composition import Guarantee
from dprelease.errors import BudgetError, InternalError, LedgerError
from dprelease.ledger.accounts import (
    FORMAT,
    SCHEMA,
    all_accounts,
    check_key,
    find_account,
    key_of,
    needs_old_keys,
    now,
    register,
    resolve,
    upgrade,
)
from dprelease.ledger.backend import Conn, SqliteBackend, is_url
from dprelease.ledger.invariants import check_invariants_allowed
from dprelease.ledger.rows import balance_of, entry_of
from dprelease.ledger.values import (
    DEFAULT_DELTA_CAP,
    Account,
    AlreadyChargedError,
    Balance,
    LedgerEntry,
    guarantee_curve,
    shortfall,
)
from dprelease.limits import DELTA_LIMIT, EPSILON_CAP_LIMIT

__all__ = ["Account", "AlreadyChargedError", "Balance", "Ledger", "LedgerEntry"]  # re-exported
DEFAULT_TIMEOUT = 60.0  # seconds a release waits for another one's charge to finish
_KEEP: Any = object()  # set_cap's default for delta: keep the δ cap as it is


def backend_for(location: str | Path, timeout: float) -> Any:
    """The backend of a ledger location: a ``postgresql://`` URL, else an SQLite path."""
    if is_url(location):
        from dprelease.ledger.postgres import PostgresBackend  # psycopg only when used

        return PostgresBackend(str(location), timeout)
    return SqliteBackend(location, timeout)


def _refuse_a_raise(row: Any | None, epsilon: float | None, delta: Any, account: str) -> None:
    """Refuse a higher or removed cap (`set_cap(only_lower=True)`): raising a data set's
    lifetime budget is for whoever owns the ledger file, with `ledger cap`."""
    old_epsilon = None if row is None else row["epsilon"]
    old_delta = DEFAULT_DELTA_CAP if row is None or row["delta"] is None else row["delta"]
    new_delta = old_delta if delta is _KEEP else (DEFAULT_DELTA_CAP if delta is None else delta)
    raised_epsilon = old_epsilon is not None and (epsilon is None or epsilon > old_epsilon)
    if raised_epsilon or new_delta > old_delta:
        cap = f"ε = {old_epsilon:g}" if raised_epsilon else f"δ = {old_delta:g}"
        raise BudgetError(
            f"The lifetime cap {cap} of this data set can be lowered here, not raised or "
            "removed: whoever owns the ledger file raises it with "
            f"`dprelease ledger cap --dataset '{account}' --epsilon E`."
        )


class Ledger:
    """The ledger file at `path` (created if missing; its folder must exist).

    Every call opens its own connection, so one `Ledger` may be shared by threads. A
    `charge()` block holds the write lock: inside it, read (`balance`, `entries`, `find`,
    `check`) but do not `set_cap` or `charge` again (that would wait for the timeout).
    """

    def __init__(self, path: str | Path, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._backend = backend_for(path, timeout)
        self.path = self._backend.path  # a Path, or a URL without its password
        self.timeout = timeout
        with self._connection() as conn, self._guard():
            # Read first, so that opening never waits for a release in progress; take the
            # write lock only to lay out a new ledger (and look again: another may have won).
            conn.begin_read()
            if conn.is_empty():
                conn.rollback()
                conn.begin_write()
                if conn.is_empty():
                    conn.lay_out(SCHEMA, FORMAT)
            if not conn.is_ours():
                raise LedgerError(self._backend.not_ours())
            if conn.version() > FORMAT:
                raise LedgerError(
                    f"The ledger '{self._backend.where}' was written by a newer dprelease; "
                    "upgrade dprelease."
                )
            if not conn.intact():
                raise LedgerError(self._backend.damaged("the integrity check failed"))
            conn.commit()
            upgrade(conn)

    def __repr__(self) -> str:
        return f"Ledger({self._backend.where!r})"

    @property
    def location(self) -> str:
        """The ledger's file path or URL (without a password), for messages."""
        return str(self._backend.where)

    # --- connections ----------------------------------------------------------------------

    @contextmanager
    def _guard(self) -> Iterator[None]:
        with self._backend.guard():
            yield

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        with self._backend.connect() as conn:
            yield conn

    def grant(self, role: str) -> None:
        """Let a database role release to this ledger (PostgreSQL; the owner only)."""
        self._backend.grant(role)

    # --- accounts -----------------------------------------------------------------------

    def account(
        self,
        records: str,
        name: str | None = None,
        legacy: str | None = None,
        *,
        aliases: Sequence[str] = (),
        sketch: Sequence[int] = (),
    ) -> Account:
        """The account a release of these records (fingerprint key) would be charged to.

        `name` is the plan's `dataset:`; `legacy` the file's SHA-256, which finds an account
        of a format-1 ledger; `aliases` other keys of the same records and `sketch` their
        rows' sketch (`accounts.resolve`). Raises BudgetError when the records and the name
        belong to two different accounts (charging either would under-count the other), or
        the name to other records."""
        with self._connection() as conn, self._guard():
            conn.begin_read()
            return resolve(conn, records, name, legacy, aliases, sketch)

    def needs_old_keys(self) -> bool:
        """Whether releases should also compute the format-3 fingerprint (an account charged
        before format 4 has not been linked to its new key yet)."""
        with self._connection() as conn, self._guard():
            conn.begin_read()
            return needs_old_keys(conn)

    def lookup(self, text: str) -> str | None:
        """The account key for a key, a records fingerprint or an account name (or None)."""
        with self._connection() as conn, self._guard():
            conn.begin_read()
            return find_account(conn, text)

    def datasets(self) -> list[tuple[str, str | None]]:
        """Every account (key, name), oldest first."""
        with self._connection() as conn, self._guard():
            conn.begin_read()
            return all_accounts(conn)

    # --- reading --------------------------------------------------------------------------

    def _read(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        with self._connection() as conn, self._guard():
            return list(conn.execute(query, params).fetchall())

    def balance(self, dataset: str) -> Balance:
        """The balance of an account (its key, or a fingerprint of records charged to it)."""
        check_key(dataset)
        with self._connection() as conn, self._guard():
            conn.begin_read()  # one snapshot for the cap and the charges; WAL: no lock
            return balance_of(conn, dataset)

    def entries(self, dataset: str) -> list[LedgerEntry]:
        """The account's charges, oldest first."""
        check_key(dataset)
        with self._connection() as conn, self._guard():
            conn.begin_read()
            key = key_of(conn, dataset)
            query = f"SELECT * FROM charges WHERE dataset = ? ORDER BY {conn.order}"
            return [entry_of(row) for row in conn.execute(query, (key,)).fetchall()]

    def find(self, release_id: str) -> LedgerEntry | None:
        rows = self._read("SELECT * FROM charges WHERE release_id = ?", (release_id,))
        return entry_of(rows[0]) if rows else None

    def check(
        self,
        dataset: str,
        guarantee: Guarantee,
        *,
        name: str | None = None,
        legacy: str | None = None,
        aliases: Sequence[str] = (),
        sketch: Sequence[int] = (),
    ) -> None:
        """Raise BudgetError if the release would exceed a cap now (advisory: takes no lock)."""
        curve = guarantee_curve(guarantee)
        with self._connection() as conn, self._guard():
            conn.begin_read()
            account = resolve(conn, dataset, name, legacy, aliases, sketch)
            problem = shortfall(balance_of(conn, account.key), curve)
        if problem is not None:
            raise BudgetError(problem)

    # --- writing --------------------------------------------------------------------------

    def set_cap(
        self,
        dataset: str,
        epsilon: float | None,
        delta: float | None = _KEEP,
        *,
        name: str | None = None,
        legacy: str | None = None,
        aliases: Sequence[str] = (),
        sketch: Sequence[int] = (),
        only_lower: bool = False,
    ) -> None:
        """Set, raise or lower the lifetime ε cap (None: no ε cap); `delta` sets the δ cap
        (None: the default DEFAULT_DELTA_CAP; left out: the δ cap stays as it is).

        A cap below what is already spent is allowed and leaves nothing to release.
        `only_lower` (the dashboard, whose users need not own the ledger file): a first ε cap
        or a lower one, never a higher or no cap; checked in the same transaction as the write.
        """
        if epsilon is not None and not (
            math.isfinite(epsilon) and 0 <= epsilon <= EPSILON_CAP_LIMIT
        ):
            raise BudgetError(
                f"The ε cap must be a finite number from 0 to {EPSILON_CAP_LIMIT:g}, "
                f"got {epsilon!r}."
            )
        if delta is not _KEEP and delta is not None and not 0 <= delta <= DELTA_LIMIT:
            raise BudgetError(
                f"The δ cap must lie between 0 and {DELTA_LIMIT:g}, got {delta!r}: δ is the "
                "chance the guarantee fails outright, and useful values are far below 1/rows."
            )
        with self._connection() as conn, self._guard():
            conn.begin_write()
            account = resolve(conn, dataset, name, legacy, aliases, sketch)
            register(conn, account, dataset, aliases, sketch)
            row = conn.execute(
                "SELECT epsilon, delta FROM caps WHERE dataset = ?", (account.key,)
            ).fetchone()
            if only_lower:
                _refuse_a_raise(row, epsilon, delta, account.name or account.key)
            if delta is _KEEP:
                delta = None if row is None else row["delta"]
            if epsilon is None and delta is None:
                conn.execute("DELETE FROM caps WHERE dataset = ?", (account.key,))
            else:
                conn.execute(
                    "INSERT INTO caps VALUES (?, ?, ?, ?) ON CONFLICT (dataset) DO UPDATE SET"
                    " epsilon = excluded.epsilon, delta = excluded.delta,"
                    " updated = excluded.updated",
                    (account.key, epsilon, delta, now()),
                )
            conn.commit()

    @contextmanager
    def charge(
        self,
        dataset: str,
        release_id: str,
        guarantee: Guarantee,
        *,
        label: str,
        tables: Sequence[str],
        name: str | None = None,
        legacy: str | None = None,
        aliases: Sequence[str] = (),
        sketch: Sequence[int] = (),
        invariants: Sequence[str] = (),
        allow_invariants: bool = False,
    ) -> Iterator[LedgerEntry]:
        """Charge a release of the records `dataset` (a fingerprint key) to their account if
        it fits the caps; committed only if the block exits normally. `invariants` names the
        tables the release publishes exact (outside the guarantee charged); on an account
        with an ε cap only the owner may, with `allow_invariants` (`ledger.invariants`).

        Raises AlreadyChargedError if `release_id` was charged before, BudgetError if the
        release does not fit, LedgerError if the file cannot be used or stays busy.
        """
        check_key(dataset)
        if not release_id or len(release_id) > 200:
            raise InternalError("a release_id must be a non-empty token of at most 200 chars")
        if isinstance(tables, str):
            raise InternalError("tables must be a sequence of table names, not one string")
        curve = guarantee_curve(guarantee)
        with self._connection() as conn:
            with self._guard():
                conn.begin_write()  # the write lock, held until COMMIT
                first = conn.execute(
                    "SELECT * FROM charges WHERE release_id = ?", (release_id,)
                ).fetchone()
                if first is not None:
                    raise AlreadyChargedError(entry_of(first))
                account = resolve(conn, dataset, name, legacy, aliases, sketch)
                problem = shortfall(balance_of(conn, account.key), curve)
                if problem is not None:
                    raise BudgetError(problem)
                check_invariants_allowed(conn, account.key, invariants, allow_invariants)
                register(conn, account, dataset, aliases, sketch)
                entry = LedgerEntry(
                    release_id=release_id,
                    dataset=account.key,
                    epsilon=curve.epsilon,
                    delta=curve.delta,
                    rho=guarantee.rho,
                    accounting=guarantee.composition,
                    label=label,
                    tables=tuple(str(table) for table in tables),
                    created=now(),
                    invariants=tuple(str(table) for table in invariants),
                )
                conn.execute(
                    "INSERT INTO charges (release_id, dataset, epsilon, delta, rho, accounting,"
                    " label, tables, created, invariants) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.release_id,
                        entry.dataset,
                        entry.epsilon,
                        entry.delta,
                        entry.rho,
                        entry.accounting,
                        entry.label,
                        json.dumps(list(entry.tables)),
                        entry.created,
                        json.dumps(list(entry.invariants)) if entry.invariants else None,
                    ),
                )
            # An exception (or a kill) here leaves the transaction uncommitted: no charge.
            yield entry
            with self._guard():
                conn.commit()
