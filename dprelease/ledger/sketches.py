"""Near-duplicate records: a bottom-k sketch of the rows, kept keyed by the ledger's secret.

The fingerprint (`dprelease.data.fingerprint`) gives the k smallest distinct 64-bit row hashes
of the records (a bottom-k sketch). Two copies of the same records with a few rows added or
removed share nearly all of them; different records share almost none. The ledger stores a
sketch only as HMAC-SHA256 values under a random secret of its own, so that the stored values
cannot be checked against guessed records without that secret (it is one of the ledger's
tables: whoever can read the whole ledger can read it, like everything else there).

Rows with little variety (a few coded columns, no identifier) repeat across *different* data
sets of one population, so their sketches would match by accident: a sketch is kept and
compared only when the records' rows are nearly all distinct (the sketch's own estimate of the
distinct rows is at least `DISTINCT_SHARE` of the rows).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any

SKETCH_SIZE = 128  # k of the bottom-k sketch the fingerprint keeps
DISTINCT_SHARE = 0.8  # rows nearly all distinct: a sketch identifies the records
MATCH_SHARE = 0.5  # shared values of the smaller sketch that make two records near-duplicates
MIN_SKETCH = 16  # smaller sketches (tiny data) are not compared: too few values to tell

SECRET_TABLE = "CREATE TABLE secret (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL)"
SKETCH_TABLE = (
    "CREATE TABLE sketches (fingerprint TEXT PRIMARY KEY, dataset TEXT NOT NULL,"
    " sketch TEXT NOT NULL)"
)


def distinct_estimate(sketch: Sequence[int]) -> float:
    """The number of distinct rows a bottom-k sketch of 64-bit hashes estimates: exact below
    k values, else (k − 1) / (the k-th smallest hash as a fraction of 2^64)."""
    if len(sketch) < SKETCH_SIZE:
        return float(len(sketch))
    largest = max(sketch)
    return (len(sketch) - 1) / ((largest + 1) / 2.0**64)


def identifying(sketch: Sequence[int], rows: int) -> bool:
    """Whether the sketch tells these records apart from others of the same population."""
    return len(sketch) >= MIN_SKETCH and distinct_estimate(sketch) >= DISTINCT_SHARE * rows


def _secret(conn: Any, create: bool) -> bytes | None:
    row = conn.execute("SELECT value FROM secret WHERE id = 1").fetchone()
    if row is None and create:
        conn.execute(
            "INSERT INTO secret (id, value) VALUES (1, ?) ON CONFLICT DO NOTHING",
            (secrets.token_hex(32),),
        )
        row = conn.execute("SELECT value FROM secret WHERE id = 1").fetchone()
    return None if row is None else bytes.fromhex(row["value"])


def _keyed(secret: bytes, sketch: Sequence[int]) -> set[str]:
    return {
        hmac.new(secret, int(value).to_bytes(8, "little"), hashlib.sha256).hexdigest()[:32]
        for value in sketch
    }


def near_duplicate_of(conn: Any, sketch: Sequence[int]) -> str | None:
    """The account whose stored sketch shares at least MATCH_SHARE of the smaller one with
    `sketch` (the best such account), or None."""
    if len(sketch) < MIN_SKETCH:
        return None
    secret = _secret(conn, create=False)
    if secret is None:
        return None
    mine = _keyed(secret, sketch)
    best: tuple[float, str] | None = None
    for row in conn.execute("SELECT dataset, sketch FROM sketches").fetchall():
        theirs = set(json.loads(row["sketch"]))
        share = len(mine & theirs) / max(1, min(len(mine), len(theirs)))
        if share >= MATCH_SHARE and (best is None or share > best[0]):
            best = (share, str(row["dataset"]))
    return None if best is None else best[1]


def keep(conn: Any, records: str, account: str, sketch: Sequence[int]) -> None:
    """Store the keyed sketch of the records `records` (a fingerprint key) of `account`."""
    if len(sketch) < MIN_SKETCH:
        return
    secret = _secret(conn, create=True)
    assert secret is not None
    conn.execute(
        "INSERT INTO sketches (fingerprint, dataset, sketch) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (records, account, json.dumps(sorted(_keyed(secret, sketch)))),
    )
