"""Numeric limits shared by the plan parser, the ledger, the dashboard's widgets and the tests.

One place for each limit, so that the CLI, the dashboard and the ledger cannot disagree.
"""

from __future__ import annotations

DELTA_LIMIT = 1e-3
"""The largest δ a plan, the CLI or the dashboard accepts, and the ledger's lifetime δ cap
when none is set. δ is the chance that the guarantee fails outright (a release may then reveal
anything), so useful values are far below 1/rows; above 1e-3 the ε of a plan means nothing
(δ = 0.9 made a zCDP budget of ρ = 0.6 read as ε ≈ 0)."""


def delta_limit_message(what: str, value: object) -> str:
    """The one-line refusal of a δ outside (0, DELTA_LIMIT]."""
    return (
        f"{what} must lie above 0 and at most {DELTA_LIMIT:g} (e.g. 1e-10), got {value!r}: "
        "δ is the chance the guarantee fails outright, and useful values are far below "
        "1/rows."
    )
