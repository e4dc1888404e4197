"""The ledger's values: one charge, a balance, an account, and the cap check (no SQLite here)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dprelease.accounting.composition import Guarantee, round_down
from dprelease.budget_text import budget_text
from dprelease.errors import BudgetError
from dprelease.limits import DELTA_LIMIT

DEFAULT_DELTA_CAP = DELTA_LIMIT  # the lifetime δ cap of an account that has not set one


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release (public facts only). `dataset` is the account's key."""

    release_id: str
    dataset: str
    epsilon: float
    delta: float
    rho: float | None
    accounting: str
    label: str
    tables: tuple[str, ...]
    created: str  # UTC, ISO 8601
    # tables published exact (`invariant: true`, issue 27): outside the charged guarantee
    invariants: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The shape `ledger show --json` prints for one release."""
        return {
            "invariants": list(self.invariants),
            "id": self.release_id,
            "created": self.created,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "accounting": self.accounting,
            "tables": list(self.tables),
        }


@dataclass(frozen=True)
class Balance:
    """An account's lifetime spend. `spent_*` are rounded up, `left_*` rounded down.

    `cap_delta` is never None: an account without a δ cap of its own has DEFAULT_DELTA_CAP."""

    cap_epsilon: float | None
    cap_delta: float
    spent_epsilon: float
    spent_delta: float
    releases: int

    @property
    def left_epsilon(self) -> float | None:
        return _left(self.cap_epsilon, self.spent_epsilon)

    @property
    def left_delta(self) -> float:
        left = _left(self.cap_delta, self.spent_delta)
        assert left is not None
        return left


@dataclass(frozen=True)
class Account:
    """Where a release of some records is charged: the account's key and name, and a note for
    the user when the records or the name were seen before under another name (or None)."""

    key: str
    name: str | None
    notice: str | None = None


def _left(cap: float | None, spent: float) -> float | None:
    # Never negative: a cap lowered below the spend leaves 0, not a debt.
    return None if cap is None else round_down(max(Fraction(cap) - Fraction(spent), Fraction(0)))


class AlreadyChargedError(BudgetError):
    """This release_id was charged before; `entry` is that first charge."""

    def __init__(self, entry: LedgerEntry) -> None:
        self.entry = entry
        super().__init__(
            f"This release was already charged (ε = {budget_text(entry.epsilon)} at "
            f"{entry.created}); "
            "it is never charged twice."
        )


def shortfall(balance: Balance, epsilon: float, delta: float) -> str | None:
    """Why a release of (ε, δ) does not fit the caps, or None when it fits.

    need ≤ left is tested on the stored values, which is exact for a float need (left is
    the largest float ≤ cap − spent); only the message's text is rounded (budget_text).
    """
    left = balance.left_epsilon
    if left is not None and epsilon > left:
        return _refusal("ε", epsilon, left, balance.cap_epsilon, "the budget")
    left_delta = balance.left_delta
    if delta > left_delta:  # a pure release (δ = 0) always fits the δ cap
        return _refusal("δ", delta, left_delta, balance.cap_delta, "delta", "δ ")
    return None


def _refusal(
    symbol: str, need: float, left: float, cap: float | None, what: str, cap_name: str = ""
) -> str:
    """One line: what the release needs, what is left, what to do. The need is shown rounded
    up and what is left (and the cap) down, so the text never reads as if it fitted."""
    return (
        f"This release needs {symbol} = {budget_text(need, 'up')} but only {symbol} = "
        f"{budget_text(left, 'down')} is left of the lifetime {cap_name}cap "
        f"{budget_text(cap or 0.0, 'down')} for this data set; lower {what} or raise the cap."
    )


def cost(guarantee: Guarantee) -> tuple[float, float]:
    """The (ε, δ) a guarantee charges; pure DP charges δ = 0."""
    epsilon, delta = guarantee.epsilon, guarantee.delta if guarantee.delta is not None else 0.0
    if epsilon is None or not (math.isfinite(epsilon) and epsilon >= 0):
        raise BudgetError(f"The ledger needs a finite ε ≥ 0 for the release, got {epsilon!r}.")
    if not 0 <= delta <= DELTA_LIMIT:
        raise BudgetError(
            f"The ledger needs a δ between 0 and {DELTA_LIMIT:g} for the release, got {delta!r}."
        )
    return epsilon, delta
