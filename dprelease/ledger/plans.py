"""The dashboard's plan store, beside the ledger: each browser's plan kept on the server's
disk, so that a reload, a server restart or a closed tab does not lose the work.

Only the plan (and its saved scenarios) is kept: it is public by construction (domains, tables,
budget; never a record value, a count or a row count). The microdata are never written here. A
plan is found by a random token (128 bits, `secrets.token_urlsafe`) that only its browser holds
(a cookie); the file is named by the token's SHA-256, so a directory listing gives no token
away. Limits, so that the store cannot fill the disk: MAX_PLAN_BYTES per plan, MAX_PLANS plans
and MAX_STORE_BYTES in all (the least recently saved go first), plans not saved for MAX_AGE are
deleted, temporary files left by an interrupted save are deleted after TMP_AGE, and a client
creates at most `NewPlanLimit.per_client` new plans a minute (all clients together
`NewPlanLimit.in_all`). No Streamlit here, so that it is tested on its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dprelease.errors import DPReleaseError
from dprelease.ledger.files import default_ledger_path, home_folder

MAX_PLAN_BYTES = 4_000_000
"""The largest plan kept (its JSON text): the sample plan with 3,143 counties and their
parent_map is about 120 kB."""

MAX_PLANS = 10_000
"""Plans kept at most; saving one more deletes the least recently saved."""

MAX_STORE_BYTES_DEFAULT = 200_000_000
MAX_STORE_BYTES = int(os.environ.get("DPRELEASE_PLANS_MAX_BYTES", MAX_STORE_BYTES_DEFAULT))
"""The store's total bytes at most (`$DPRELEASE_PLANS_MAX_BYTES`, default 200 MB); saving more
deletes the least recently saved plans first."""

MAX_AGE = timedelta(days=30)
"""A plan not saved for this long is deleted."""

TMP_AGE = timedelta(minutes=10)
"""A temporary file this old is a save that never finished (a crash, a full disk): deleted."""

NEW_PLANS_PER_CLIENT = 10
NEW_PLANS_IN_ALL = 60
"""New plans a minute: from one client (its network address), and from all together."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]{22,64}")


class PlanStoreError(DPReleaseError):
    """The plan cannot be kept (too large, or the store's folder cannot be written)."""


def new_token() -> str:
    return secrets.token_urlsafe(16)


def is_token(text: object) -> bool:
    return isinstance(text, str) and _TOKEN.fullmatch(text) is not None


def default_store_dir() -> Path:
    """`$DPRELEASE_PLANS`, else a `plans` folder beside the ledger file (~/.dprelease for a
    ledger on a PostgreSQL server: kept plans are one user's, not the team's)."""
    configured = os.environ.get("DPRELEASE_PLANS")
    if configured:
        return Path(configured)
    ledger = default_ledger_path()
    return (ledger.parent if isinstance(ledger, Path) else home_folder()) / "plans"


@dataclass(frozen=True)
class StoredPlan:
    """A kept plan: the plan file's mapping, the data file's name it was made for (None: no
    data yet; never a path), whether that was the bundled sample, when it was saved, and the
    Budget page's saved scenarios (name → plan mapping, in the order they were saved)."""

    plan: dict[str, Any]
    data_name: str | None
    sample: bool
    saved: datetime
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Offer:
    """A kept plan offered to a new session: the browser's own (its cookie's token), or one
    opened from a link (`from_link`), which is only ever taken as a copy under a fresh token."""

    kept: StoredPlan
    from_link: bool = False


class NewPlanLimit:
    """How many new plans a client, and all clients together, may create in a minute.

    A client is what the server can tell apart: its network address (behind a proxy that is
    the proxy's, so `in_all` stays the bound that always holds). Kept in memory, per store
    folder: a restart forgets it, which is harmless since the byte bounds still hold."""

    WINDOW = 60.0

    def __init__(
        self, per_client: int = NEW_PLANS_PER_CLIENT, in_all: int = NEW_PLANS_IN_ALL
    ) -> None:
        self.per_client = per_client
        self.in_all = in_all
        self._times: dict[str | None, deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str | None, now: float) -> bool:
        """Count one new plan of `client` at `now` (seconds) if both bounds allow it."""
        with self._lock:
            for key in list(self._times):
                times = self._times[key]
                while times and times[0] <= now - self.WINDOW:
                    times.popleft()
                if not times:
                    del self._times[key]
            in_all = sum(len(times) for times in self._times.values())
            mine = self._times.get(client, deque())
            if in_all >= self.in_all or (client is not None and len(mine) >= self.per_client):
                return False
            mine.append(now)
            self._times[client] = mine
            return True


_LIMITS: dict[Path, NewPlanLimit] = {}
_LIMITS_LOCK = threading.Lock()


def _limit_of(directory: Path) -> NewPlanLimit:
    """The server's one limit for this store folder (every session shares it)."""
    with _LIMITS_LOCK:
        return _LIMITS.setdefault(directory.resolve(), NewPlanLimit())


class PlanStore:
    def __init__(self, directory: Path | None = None, limit: NewPlanLimit | None = None) -> None:
        self.directory = directory or default_store_dir()
        self.limit = limit or _limit_of(self.directory)

    def _path(self, token: str) -> Path:
        if not is_token(token):
            raise PlanStoreError("Not a plan token.")
        return self.directory / (hashlib.sha256(token.encode()).hexdigest()[:40] + ".json")

    def save(
        self,
        token: str,
        plan: dict[str, Any],
        *,
        data_name: str | None,
        sample: bool,
        scenarios: dict[str, dict[str, Any]] | None = None,
        client: str | None = None,
        now: datetime | None = None,
    ) -> None:
        """Keep `plan` (and `scenarios`) under `token`, written to a temporary file, then
        renamed into place. A token not kept yet is a new plan: it counts against `client`'s
        bound on new plans a minute (`client`: its network address, None when unknown)."""
        saved = now or datetime.now(UTC)
        text = json.dumps(
            {
                "plan": plan,
                "data": data_name,
                "sample": sample,
                "saved": saved.isoformat(),
                "scenarios": scenarios or {},
            },
            ensure_ascii=False,
        )
        if len(text.encode()) > MAX_PLAN_BYTES:
            raise PlanStoreError(
                f"The plan is too large to keep on the server ({len(text.encode()):,} bytes; "
                f"at most {MAX_PLAN_BYTES:,}); save it as a file from the Data page."
            )
        path = self._path(token)
        if not path.exists() and not self.limit.take(client, saved.timestamp()):
            raise PlanStoreError(
                "Too many new plans on this server in the last minute: this one is not kept "
                "on the server yet (it will be with a change after a minute); save it as a "
                "file from the Data page meanwhile."
            )
        self._write(path, text)
        self._prune(saved, keep=path)

    def _write(self, path: Path, text: str) -> None:
        temporary: Path | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=self.directory, suffix=".tmp", delete=False
            ) as handle:
                temporary = Path(handle.name)
                handle.write(text)
            os.replace(temporary, path)
        except OSError as error:
            if temporary is not None:  # a full disk: leave no half-written file behind
                temporary.unlink(missing_ok=True)
            raise PlanStoreError(
                f"The plan could not be kept on the server ({error.strerror}); save it as a "
                "file from the Data page."
            ) from None

    def load(self, token: str, now: datetime | None = None) -> StoredPlan | None:
        """The plan kept under `token`, or None (never kept, expired, or unreadable)."""
        if not is_token(token):
            return None
        path = self._path(token)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            stored = StoredPlan(
                plan=dict(raw["plan"]),
                data_name=raw["data"] if isinstance(raw["data"], str) else None,
                sample=bool(raw["sample"]),
                saved=datetime.fromisoformat(raw["saved"]),
                scenarios=_scenarios(raw.get("scenarios")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if (now or datetime.now(UTC)) - stored.saved > MAX_AGE:
            path.unlink(missing_ok=True)
            return None
        return stored

    def forget(self, token: str) -> None:
        if is_token(token):
            self._path(token).unlink(missing_ok=True)

    def _prune(self, now: datetime, keep: Path) -> None:
        """Delete expired plans, then the least recently saved beyond MAX_PLANS or beyond
        MAX_STORE_BYTES in all (never `keep`, the plan just saved), and stale temporary files."""
        try:
            found = [(path, path.stat()) for path in self.directory.glob("*.json")]
            temporaries = [(path, path.stat()) for path in self.directory.glob("*.tmp")]
        except OSError:
            return
        found.sort(key=lambda item: item[1].st_mtime)
        cutoff = (now - MAX_AGE).timestamp()
        count, total = len(found), sum(stat.st_size for _, stat in found)
        for path, stat in found:
            over = count > MAX_PLANS or total > MAX_STORE_BYTES
            if path != keep and (over or stat.st_mtime < cutoff) and _delete(path):
                count, total = count - 1, total - stat.st_size
        stale = time.time() - TMP_AGE.total_seconds()
        for path, stat in temporaries:
            if stat.st_mtime < stale:
                _delete(path)


def _delete(path: Path) -> bool:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def _scenarios(raw: object) -> dict[str, dict[str, Any]]:
    """The kept scenarios, or none if the file holds something else (an older file)."""
    if not isinstance(raw, dict):
        return {}
    return {str(name): dict(plan) for name, plan in raw.items() if isinstance(plan, dict)}
