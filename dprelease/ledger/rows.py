"""The ledger's rows read as values: a charge as a `LedgerEntry`, an account's cap and charges
as its `Balance` (each charge's privacy curve kept, `dprelease.ledger.lifetime`)."""

from __future__ import annotations

import json
from typing import Any

from dprelease.accounting.composition import decimal_sum
from dprelease.ledger.accounts import key_of
from dprelease.ledger.backend import Conn
from dprelease.ledger.lifetime import curve_of
from dprelease.ledger.values import DEFAULT_DELTA_CAP, Balance, LedgerEntry


def entry_of(row: Any) -> LedgerEntry:
    """A row of `charges` as an entry."""
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
        invariants=tuple(json.loads(row["invariants"] or "[]")),
    )


def balance_of(conn: Conn, dataset: str) -> Balance:
    """An account's cap and charges, read inside the caller's transaction (one snapshot)."""
    dataset = key_of(conn, dataset)
    cap = conn.execute("SELECT epsilon, delta FROM caps WHERE dataset = ?", (dataset,))
    cap_row = cap.fetchone()
    rows = conn.execute(
        "SELECT epsilon, delta, rho FROM charges WHERE dataset = ?", (dataset,)
    ).fetchall()
    cap_delta = cap_row["delta"] if cap_row else None
    return Balance(
        cap_epsilon=cap_row["epsilon"] if cap_row else None,
        cap_delta=DEFAULT_DELTA_CAP if cap_delta is None else cap_delta,
        spent_epsilon=decimal_sum(row["epsilon"] for row in rows),
        spent_delta=decimal_sum(row["delta"] for row in rows),
        releases=len(rows),
        curves=tuple(curve_of(row["epsilon"], row["delta"], row["rho"]) for row in rows),
    )
