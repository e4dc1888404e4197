"""Files: where the ledger lives ($DPRELEASE_LEDGER: a path, or a ``postgresql://`` URL for a
team's shared ledger; else ~/.dprelease/ledger.sqlite), and the
format-1 key of a data set (the SHA-256 of its file's bytes), by which old ledgers found accounts.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dprelease.errors import LedgerError
from dprelease.ledger.backend import is_url

ENV_VAR = "DPRELEASE_LEDGER"


def dataset_key(data: bytes) -> str:
    """The ledger key of a data set: the SHA-256 (hex) of its bytes."""
    return hashlib.sha256(data).hexdigest()


def dataset_key_of_file(path: str | Path) -> str:
    """`dataset_key` of a file's bytes, read in chunks (a data file may not fit in memory)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def default_ledger_path() -> str | Path:
    """$DPRELEASE_LEDGER (a path, or a PostgreSQL URL kept as text: a Path would fold its
    `//`), else ~/.dprelease/ledger.sqlite (that folder is created)."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return chosen if is_url(chosen) else Path(chosen).expanduser()
    return home_folder() / "ledger.sqlite"


def home_folder() -> Path:
    """~/.dprelease (created): the default ledger file's folder."""
    folder = Path.home() / ".dprelease"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise LedgerError(
            f"Cannot create the ledger folder '{folder}': {error.strerror or error}; "
            f"set {ENV_VAR} to a writable path."
        ) from None
    return folder
