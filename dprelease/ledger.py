"""The budget ledger: what each data set has spent over its lifetime, against a cap.

One SQLite file (stdlib `sqlite3`) holds, per data set (keyed by the SHA-256 of its bytes),
every charged release and an optional lifetime cap on ε and δ. Releases compose by basic
composition: spent ε = Σ ε_i and spent δ = Σ δ_i, summed exactly with `Fraction` and rounded
up, so floating-point addition can never under-count (ten charges of the float 0.1 add up to
slightly more than 1, and a cap of 1.0 refuses the tenth).

How a release is charged exactly once:

- `charge()` opens a write transaction (``BEGIN IMMEDIATE``), refuses a `release_id` it has
  seen (`AlreadyChargedError`), checks the cap, inserts the entry and yields. The caller makes
  the release inside the block; on a normal exit the transaction commits, on an exception (or
  a crash, or a kill) it never commits, so nothing is charged. Holding the write lock across
  check → work → commit is what makes two concurrent releases unable to overspend: the second
  waits (busy timeout) and then sees the first's charge.
- The caller hands the release out only after the block: a crash between the commit and the
  hand-out leaves a release charged but not delivered, which is the safe direction.
- WAL journal mode, so that readers (`balance`, `entries`, `check`) are never blocked by a
  release in progress; ``synchronous=FULL``, so that a committed charge survives power loss.
  WAL needs a local file system (not a network share).

A cap may be lowered below what is already spent: that is allowed (a steward may tighten
policy after the fact), and then nothing more can be released from that data set.

The ledger stores public facts only: ε, δ, ρ, the accounting, a label (the plan's name or
summary), table names and times. Never a data value, a count, a row count or a seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

from dprelease.accounting import Guarantee, exact_sum, round_down, round_up
from dprelease.errors import BudgetError, InternalError, LedgerError

ENV_VAR = "DPRELEASE_LEDGER"
DEFAULT_TIMEOUT = 60.0  # seconds a release waits for another one's charge to finish
_APPLICATION_ID = 0x64707265  # "dpre" in the SQLite header: tells our file from any other
_FORMAT = 1  # PRAGMA user_version of the layout below
_SCHEMA = (
    "CREATE TABLE caps (dataset TEXT PRIMARY KEY, epsilon REAL, delta REAL, updated TEXT NOT NULL)",
    "CREATE TABLE charges (release_id TEXT PRIMARY KEY, dataset TEXT NOT NULL,"
    " epsilon REAL NOT NULL, delta REAL NOT NULL, rho REAL, accounting TEXT NOT NULL,"
    " label TEXT NOT NULL, tables TEXT NOT NULL, created TEXT NOT NULL)",
    "CREATE INDEX charges_by_dataset ON charges (dataset)",
)
_KEY = re.compile(r"[0-9a-f]{64}")


def dataset_key(data: bytes) -> str:
    """The ledger key of a data set: the SHA-256 (hex) of its bytes."""
    return hashlib.sha256(data).hexdigest()


def dataset_key_of_file(path: str | Path) -> str:
    """`dataset_key` of a file's bytes, read in chunks (a data file may not fit in memory)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def default_ledger_path() -> Path:
    """$DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite (that folder is created)."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return Path(chosen).expanduser()
    folder = Path.home() / ".dprelease"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise LedgerError(
            f"Cannot create the ledger folder '{folder}': {error.strerror or error}; "
            f"set {ENV_VAR} to a writable path."
        ) from None
    return folder / "ledger.sqlite"


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release (public facts only)."""

    release_id: str
    dataset: str
    epsilon: float
    delta: float
    rho: float | None
    accounting: str
    label: str
    tables: tuple[str, ...]
    created: str  # UTC, ISO 8601


@dataclass(frozen=True)
class Balance:
    """A data set's lifetime spend. `spent_*` are rounded up, `left_*` rounded down."""

    cap_epsilon: float | None
    cap_delta: float | None
    spent_epsilon: float
    spent_delta: float
    releases: int

    @property
    def left_epsilon(self) -> float | None:
        return _left(self.cap_epsilon, self.spent_epsilon)

    @property
    def left_delta(self) -> float | None:
        return _left(self.cap_delta, self.spent_delta)


def _left(cap: float | None, spent: float) -> float | None:
    # Never negative: a cap lowered below the spend leaves 0, not a debt.
    return None if cap is None else round_down(max(Fraction(cap) - Fraction(spent), Fraction(0)))


class AlreadyChargedError(BudgetError):
    """This release_id was charged before; `entry` is that first charge."""

    def __init__(self, entry: LedgerEntry) -> None:
        self.entry = entry
        super().__init__(
            f"This release was already charged (ε = {entry.epsilon!r} at {entry.created}); "
            "it is never charged twice."
        )


def _shortfall(balance: Balance, epsilon: float, delta: float) -> str | None:
    """Why a release of (ε, δ) does not fit the caps, or None when it fits.

    need ≤ left is tested on the rounded values, which is exact for a float need (left is
    the largest float ≤ cap − spent), so the check and the shown balance always agree.
    """
    left = balance.left_epsilon
    if left is not None and epsilon > left:
        # A gap of a few ulps surprises (ten times the float 0.1 exceeds 1): say what fits.
        lower = f"lower the budget to ε = {left!r}" if epsilon - left < 1e-9 else "lower the budget"
        return (
            f"This release needs ε = {epsilon!r} but only ε = {left!r} is left of the lifetime "
            f"cap {balance.cap_epsilon!r} for this data set; {lower} or raise the cap."
        )
    left = balance.left_delta
    if left is not None and delta > left:  # a pure release (δ = 0) always fits the δ cap
        return (
            f"This release needs δ = {delta!r} but only δ = {left!r} is left of the lifetime "
            f"δ cap {balance.cap_delta!r} for this data set; lower delta or raise the cap."
        )
    return None


def _cost(guarantee: Guarantee) -> tuple[float, float]:
    """The (ε, δ) a guarantee charges; pure DP charges δ = 0."""
    epsilon, delta = guarantee.epsilon, guarantee.delta if guarantee.delta is not None else 0.0
    if epsilon is None or not (math.isfinite(epsilon) and epsilon >= 0):
        raise BudgetError(f"The ledger needs a finite ε ≥ 0 for the release, got {epsilon!r}.")
    if not 0 <= delta <= 1:
        raise BudgetError(f"The ledger needs a δ between 0 and 1 for the release, got {delta!r}.")
    return epsilon, delta


def _check_key(dataset: str) -> None:
    # A file name or path here would silently open a second account for the same data.
    if not _KEY.fullmatch(dataset):
        raise InternalError("a ledger data set must be a dataset_key() (64 lowercase hex digits)")


def _entry(row: sqlite3.Row) -> LedgerEntry:
    return LedgerEntry(
        release_id=row["release_id"],
        dataset=row["dataset"],
        epsilon=row["epsilon"],
        delta=row["delta"],
        rho=row["rho"],
        accounting=row["accounting"],
        label=row["label"],
        tables=tuple(json.loads(row["tables"])),
        created=row["created"],
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Ledger:
    """The ledger file at `path` (created if missing; its folder must exist).

    Every call opens its own connection, so one `Ledger` may be shared by threads. A
    `charge()` block holds the write lock: inside it, read (`balance`, `entries`, `find`,
    `check`) but do not `set_cap` or `charge` again (that would wait for the timeout).
    """

    def __init__(self, path: str | Path, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = timeout
        if self.path.is_dir():
            raise LedgerError(f"The ledger path '{self.path}' is a folder; give a file path.")
        if not self.path.parent.is_dir():
            raise LedgerError(
                f"The folder '{self.path.parent}' for the ledger does not exist; create it first."
            )
        with self._connection() as conn, self._guard():
            # Read first, so that opening never waits for a release in progress; take the
            # write lock only to lay out a new file (and look again: another may have won).
            conn.execute("BEGIN")
            if self._is_empty(conn):
                conn.execute("ROLLBACK")
                conn.execute("BEGIN IMMEDIATE")
                if self._is_empty(conn):
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {_FORMAT}")
            if conn.execute("PRAGMA application_id").fetchone()[0] != _APPLICATION_ID:
                raise LedgerError(
                    f"'{self.path}' is an SQLite database but not a dprelease ledger; "
                    "choose another path."
                )
            if conn.execute("PRAGMA user_version").fetchone()[0] > _FORMAT:
                raise LedgerError(
                    f"The ledger '{self.path}' was written by a newer dprelease; upgrade dprelease."
                )
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise LedgerError(self._damaged("the integrity check failed"))
            conn.execute("COMMIT")

    @staticmethod
    def _is_empty(conn: sqlite3.Connection) -> bool:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return bool(app_id == 0 and objects == 0)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # --- connections and errors ---------------------------------------------------------

    def _damaged(self, why: str) -> str:
        return (
            f"The ledger '{self.path}' is not a readable dprelease ledger ({why}); "
            "restore it from a backup or choose another path."
        )

    def _error(self, error: sqlite3.Error) -> LedgerError:
        """One line the user can act on, for any SQLite failure."""
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary result code
        why = str(error).splitlines()[0] if str(error) else type(error).__name__
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return LedgerError(
                f"The ledger '{self.path}' is busy: another release is being charged; "
                "try again in a moment."
            )
        if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return LedgerError(self._damaged(why))
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
            return LedgerError(
                f"Cannot write the ledger '{self.path}' ({why}); the file and its folder "
                "must be writable."
            )
        return LedgerError(f"The ledger '{self.path}' cannot be used ({why}).")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise self._error(error) from None

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._guard():
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so the lock is explicit.
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            conn.row_factory = sqlite3.Row
            with self._guard():
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")  # a commit is on disk when it returns
            yield conn
        finally:
            conn.close()  # rolls back whatever was not committed

    # --- reading --------------------------------------------------------------------------

    def _balance(self, conn: sqlite3.Connection, dataset: str) -> Balance:
        cap = conn.execute("SELECT epsilon, delta FROM caps WHERE dataset = ?", (dataset,))
        cap_row = cap.fetchone()
        rows = conn.execute(
            "SELECT epsilon, delta FROM charges WHERE dataset = ?", (dataset,)
        ).fetchall()
        return Balance(
            cap_epsilon=cap_row["epsilon"] if cap_row else None,
            cap_delta=cap_row["delta"] if cap_row else None,
            spent_epsilon=round_up(exact_sum(row["epsilon"] for row in rows)),
            spent_delta=round_up(exact_sum(row["delta"] for row in rows)),
            releases=len(rows),
        )

    def _read(self, query: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        with self._connection() as conn, self._guard():
            return conn.execute(query, params).fetchall()

    def balance(self, dataset: str) -> Balance:
        _check_key(dataset)
        with self._connection() as conn, self._guard():
            conn.execute("BEGIN")  # one snapshot for the cap and the charges; WAL: no lock
            return self._balance(conn, dataset)

    def entries(self, dataset: str) -> list[LedgerEntry]:
        """The data set's charges, oldest first."""
        _check_key(dataset)
        query = "SELECT * FROM charges WHERE dataset = ? ORDER BY rowid"
        return [_entry(row) for row in self._read(query, (dataset,))]

    def find(self, release_id: str) -> LedgerEntry | None:
        rows = self._read("SELECT * FROM charges WHERE release_id = ?", (release_id,))
        return _entry(rows[0]) if rows else None

    def check(self, dataset: str, guarantee: Guarantee) -> None:
        """Raise BudgetError if the release would exceed a cap now (advisory: takes no lock)."""
        epsilon, delta = _cost(guarantee)
        problem = _shortfall(self.balance(dataset), epsilon, delta)
        if problem is not None:
            raise BudgetError(problem)

    # --- writing --------------------------------------------------------------------------

    def set_cap(self, dataset: str, epsilon: float | None, delta: float | None = None) -> None:
        """Set, raise or lower the lifetime cap; None means no cap (both None: remove it).

        A cap below what is already spent is allowed and leaves nothing to release.
        """
        _check_key(dataset)
        if epsilon is not None and not (math.isfinite(epsilon) and epsilon >= 0):
            raise BudgetError(f"The ε cap must be a finite number ≥ 0, got {epsilon!r}.")
        if delta is not None and not 0 <= delta <= 1:
            raise BudgetError(f"The δ cap must lie between 0 and 1, got {delta!r}.")
        with self._connection() as conn, self._guard():
            conn.execute("BEGIN IMMEDIATE")
            if epsilon is None and delta is None:
                conn.execute("DELETE FROM caps WHERE dataset = ?", (dataset,))
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO caps VALUES (?, ?, ?, ?)",
                    (dataset, epsilon, delta, _now()),
                )
            conn.execute("COMMIT")

    @contextmanager
    def charge(
        self,
        dataset: str,
        release_id: str,
        guarantee: Guarantee,
        *,
        label: str,
        tables: Sequence[str],
    ) -> Iterator[LedgerEntry]:
        """Charge a release if it fits the cap; committed only if the block exits normally.

        Raises AlreadyChargedError if `release_id` was charged before, BudgetError if the
        release does not fit, LedgerError if the file cannot be used or stays busy.
        """
        _check_key(dataset)
        if not release_id or len(release_id) > 200:
            raise InternalError("a release_id must be a non-empty token of at most 200 chars")
        if isinstance(tables, str):
            raise InternalError("tables must be a sequence of table names, not one string")
        epsilon, delta = _cost(guarantee)
        entry = LedgerEntry(
            release_id=release_id,
            dataset=dataset,
            epsilon=epsilon,
            delta=delta,
            rho=guarantee.rho,
            accounting=guarantee.composition,
            label=label,
            tables=tuple(str(name) for name in tables),
            created=_now(),
        )
        with self._connection() as conn:
            with self._guard():
                conn.execute("BEGIN IMMEDIATE")  # the write lock, held until COMMIT
                first = conn.execute(
                    "SELECT * FROM charges WHERE release_id = ?", (release_id,)
                ).fetchone()
                if first is not None:
                    raise AlreadyChargedError(_entry(first))
                problem = _shortfall(self._balance(conn, dataset), epsilon, delta)
                if problem is not None:
                    raise BudgetError(problem)
                conn.execute(
                    "INSERT INTO charges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    ),
                )
            # An exception (or a kill) here leaves the transaction uncommitted: no charge.
            yield entry
            with self._guard():
                conn.execute("COMMIT")
