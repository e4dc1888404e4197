"""The ledger's values: one charge, a balance, an account, and the cap check (no SQLite here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from dprelease.accounting.composition import Guarantee, decimal_down, typed_value
from dprelease.budget_text import budget_text
from dprelease.errors import BudgetError
from dprelease.ledger.lifetime import (
    RENYI,
    Composed,
    Curve,
    admits,
    basic_delta,
    composed,
    curve_of,
)
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

    @property
    def curve(self) -> Curve:
        return curve_of(self.epsilon, self.delta, self.rho)

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
    """An account's lifetime spend. `spent_*` are the plain sums, rounded up; `composed` the
    tightest valid total the ledger enforces (`dprelease.ledger.lifetime`); `left_*` what is
    left of the cap under the composed total, rounded down.

    `cap_delta` is never None: an account without a δ cap of its own has DEFAULT_DELTA_CAP."""

    cap_epsilon: float | None
    cap_delta: float
    spent_epsilon: float
    spent_delta: float
    releases: int
    curves: tuple[Curve, ...] = field(default=(), compare=False, repr=False)

    @property
    def composed(self) -> Composed:
        return composed(self.curves, self.cap_epsilon, self.cap_delta)

    @property
    def left_epsilon(self) -> float | None:
        return _left(self.cap_epsilon, self.composed.epsilon)

    @property
    def left_delta(self) -> float:
        """What an (ε, δ)-only release may still use: the basic filter's part of the δ cap
        less the δ spent (`lifetime.basic_delta`)."""
        left = _left(basic_delta(self.cap_delta), self.spent_delta)
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
    # Decimals (issue 37.4): 1.5 less 1.4 leaves 0.1, not 0.09999999999999987.
    left = None if cap is None else max(typed_value(cap) - typed_value(spent), Fraction(0))
    return None if left is None else decimal_down(left)


class AlreadyChargedError(BudgetError):
    """This release_id was charged before; `entry` is that first charge."""

    def __init__(self, entry: LedgerEntry) -> None:
        self.entry = entry
        super().__init__(
            f"This release was already charged (ε = {budget_text(entry.epsilon)} at "
            f"{entry.created}); "
            "it is never charged twice."
        )


def shortfall(balance: Balance, curve: Curve) -> str | None:
    """Why a release with this privacy curve does not fit the caps, or None when it fits.

    The test is the filter's (`lifetime.admits`: exact sums, conversions rounded up); only the
    message's text is rounded (budget_text)."""
    after = (*balance.curves, curve)
    if admits(after, balance.cap_epsilon, balance.cap_delta):
        return None
    total = composed(after, balance.cap_epsilon, balance.cap_delta)
    if balance.cap_epsilon is not None and total.epsilon > balance.cap_epsilon:
        left = balance.left_epsilon or 0.0
        why = (
            f"with it the lifetime total composes to ε = {budget_text(total.epsilon, 'up')}"
            if total.rule == RENYI
            else None
        )
        return _refusal("ε", curve.epsilon, left, balance.cap_epsilon, "the budget", why=why)
    return _refusal("δ", curve.delta, balance.left_delta, balance.cap_delta, "delta", "δ ")


def _refusal(
    symbol: str,
    need: float,
    left: float,
    cap: float | None,
    what: str,
    cap_name: str = "",
    why: str | None = None,
) -> str:
    """One line: what the release needs, what is left, what to do. The need is shown rounded
    up and what is left (and the cap) down, so the text never reads as if it fitted."""
    return (
        f"This release needs {symbol} = {budget_text(need, 'up')} but only {symbol} = "
        f"{budget_text(left, 'down')} is left of the lifetime {cap_name}cap "
        f"{budget_text(cap or 0.0, 'down')} for this data set"
        + (f" ({why})" if why else "")
        + f"; lower {what} or raise the cap."
    )


def guarantee_curve(guarantee: Guarantee) -> Curve:
    """The privacy curve a release's guarantee charges (checked as `cost` checks it)."""
    epsilon, delta = cost(guarantee)
    return curve_of(epsilon, delta, guarantee.rho)


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
