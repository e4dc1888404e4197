"""Files: where the ledger lives ($DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite), and the
format-1 key of a data set (the SHA-256 of its file's bytes), by which old ledgers found accounts.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dprelease.errors import LedgerError

ENV_VAR = "DPRELEASE_LEDGER"


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
