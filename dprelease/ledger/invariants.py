"""Exact tables on a capped account (issue 35, finding 4).

An invariant table (`invariant: true`) is published exact, outside the guarantee, and charges
nothing: on an account with a lifetime cap, a release with a tiny noisy share could otherwise
publish exact cross-tabulations of records whose budget is spent. A cap is the ledger owner's
promise, so only the owner may set it aside: a release with invariant tables on an account
with an ε cap needs the owner's explicit allowance (the CLI's `release --allow-invariants`,
run by the ledger's owner). Whoever can write an SQLite ledger file owns it; on PostgreSQL the
owner is the role that owns the ledger's tables (a role given `ledger grant` is not).
"""

from __future__ import annotations

from collections.abc import Sequence

from dprelease.errors import BudgetError
from dprelease.ledger.backend import Conn


def check_invariants_allowed(
    conn: Conn, account: str, invariants: Sequence[str], allowed: bool
) -> None:
    """Raise BudgetError when `invariants` may not be published on `account` (a key), inside
    the charge's transaction: the account has an ε cap and the owner did not allow them."""
    if not invariants:
        return
    cap = conn.execute("SELECT epsilon FROM caps WHERE dataset = ?", (account,)).fetchone()
    if cap is None or cap["epsilon"] is None:
        return
    if allowed and conn.is_owner():
        return
    who = "by the ledger's owner" if allowed else "only by the ledger's owner"
    raise BudgetError(
        f"This account has a lifetime ε cap, and the plan publishes {len(invariants)} "
        "invariant table(s) exact, outside that cap; that may be allowed "
        f"{who} (`release --allow-invariants`, run as the owner). Nothing was charged."
    )
