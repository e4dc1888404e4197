"""The dashboard's plan store: each browser's plan kept on the server's disk, so that a reload,
a server restart or a closed tab does not lose the work.

Only the plan is kept: it is public by construction (domains, tables, budget; never a record
value, a count or a row count). The microdata are never written here. A plan is found by a
random token (128 bits, `secrets.token_urlsafe`) that only its browser holds (the page's URL
and a cookie); the file is named by the token's SHA-256, so a directory listing gives no token
away. Limits: MAX_PLAN_BYTES per plan, MAX_PLANS plans (the oldest go first), and plans not
saved for MAX_AGE are deleted. No Streamlit here, so that it is tested on its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dprelease.errors import DPReleaseError
from dprelease.ledger.files import default_ledger_path

MAX_PLAN_BYTES = 4_000_000
"""The largest plan kept (its JSON text): the sample plan with 3,143 counties and their
parent_map is about 120 kB."""

MAX_PLANS = 10_000
"""Plans kept at most; saving one more deletes the least recently saved."""

MAX_AGE = timedelta(days=30)
"""A plan not saved for this long is deleted."""

_TOKEN = re.compile(r"[A-Za-z0-9_-]{22,64}")


class PlanStoreError(DPReleaseError):
    """The plan cannot be kept (too large, or the store's folder cannot be written)."""


def new_token() -> str:
    return secrets.token_urlsafe(16)


def is_token(text: object) -> bool:
    return isinstance(text, str) and _TOKEN.fullmatch(text) is not None


def default_store_dir() -> Path:
    """`$DPRELEASE_PLANS`, else a `plans` folder beside the ledger file."""
    configured = os.environ.get("DPRELEASE_PLANS")
    return Path(configured) if configured else default_ledger_path().parent / "plans"


@dataclass(frozen=True)
class StoredPlan:
    """A kept plan: the plan file's mapping, the data file's name it was made for (None: no
    data yet; never a path), whether that was the bundled sample, and when it was saved."""

    plan: dict[str, Any]
    data_name: str | None
    sample: bool
    saved: datetime


class PlanStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_store_dir()

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
        now: datetime | None = None,
    ) -> None:
        """Keep `plan` under `token` (written to a temporary file, then renamed into place)."""
        saved = now or datetime.now(UTC)
        text = json.dumps(
            {"plan": plan, "data": data_name, "sample": sample, "saved": saved.isoformat()},
            ensure_ascii=False,
        )
        if len(text.encode()) > MAX_PLAN_BYTES:
            raise PlanStoreError(
                f"The plan is too large to keep on the server ({len(text.encode()):,} bytes; "
                f"at most {MAX_PLAN_BYTES:,}); save it as a file from the Data page."
            )
        path = self._path(token)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=self.directory, suffix=".tmp", delete=False
            ) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        except OSError as error:
            raise PlanStoreError(
                f"The plan could not be kept on the server ({error.strerror}); save it as a "
                "file from the Data page."
            ) from None
        self._prune(saved)

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

    def _prune(self, now: datetime) -> None:
        """Delete expired plans, and the least recently saved beyond MAX_PLANS."""
        try:
            files = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
        except OSError:
            return
        cutoff = (now - MAX_AGE).timestamp()
        excess = len(files) - MAX_PLANS
        for index, path in enumerate(files):
            try:
                if index < excess or path.stat().st_mtime < cutoff:
                    path.unlink(missing_ok=True)
            except OSError:
                continue
