"""What a statistic is handed by the allocator, and who its neighbours are.

`Share` is one statistic's part of the plan's budget in the accountant's own unit: ε under
pure and advanced, (ε, δ) under approx, ρ under zcdp. A statistic's calibration turns a share
into noise whose exact privacy cost never exceeds it; the cost is reported back as a `Share`
too, so the allocator composes statistics exactly as it composes tables of counts.

`StatContext` is the public part of the plan a statistic's sensitivity depends on: the privacy
unit's `max_rows` m, `neighbors`, and whether the statistic has by-columns (then a replaced
unit may move its rows from one group to another).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dprelease.accounting.accountants.base import Accountant
from dprelease.accounting.accountants.registry import ACCOUNTANTS
from dprelease.errors import BudgetError, InternalError, PlanError, quote
from dprelease.plan.table_spec import Neighbors


@dataclass(frozen=True)
class Share:
    """A budget in the accountant's unit. Fields that do not apply are None."""

    accounting: str  # the accountant's name (`accountant` is the object)
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None

    def __post_init__(self) -> None:
        if self.accounting not in ACCOUNTANTS:
            raise PlanError(
                f"accounting must be one of {list(ACCOUNTANTS)}, got {quote(self.accounting)}."
            )
        needed = self.accountant.unit
        value = getattr(self, self.accountant.unit)
        if value is None or not (value > 0 and math.isfinite(value)):
            raise BudgetError(f"A statistic's {needed} must be a finite number > 0, got {value!r}.")
        if self.delta is not None and not 0 <= self.delta < 1:
            raise BudgetError(f"A statistic's delta must lie in [0, 1), got {self.delta!r}.")

    @property
    def accountant(self) -> Accountant:
        """The accountant whose unit the share is in."""
        return ACCOUNTANTS[self.accounting]

    @property
    def amount(self) -> float:
        """The share in the accountant's additive unit: ρ under zcdp, else ε (always set)."""
        value: float | None = getattr(self, self.accountant.unit)
        if value is None:  # __post_init__ refuses this; kept for the type checker
            raise BudgetError("A statistic's share has no amount.")
        return value

    def pure_epsilon(self, bounded_range: bool = False) -> float:
        """The largest ε an ε-DP mechanism may have within this share, in any unit."""
        return self.accountant.pure_epsilon(self.amount, bounded_range)

    def fits_pure(self, epsilons: Iterable[Fraction], bounded_range: bool = False) -> bool:
        """Whether ε-DP mechanisms with these ε's, composed, fit this share exactly."""
        return self._pure_amount(epsilons, bounded_range) <= Fraction(self.amount)

    def pure_cost(
        self,
        epsilons: Iterable[Fraction],
        bounded_range: bool = False,
        delta: float | Literal["split"] | None = "split",
    ) -> Share:
        """What ε-DP mechanisms with these ε's cost together, in this share's unit, rounded
        up. `delta`: the cost's δ ("split": 0.0 where the accountant splits δ, else none)."""
        epsilons = [Fraction(e) for e in epsilons]
        amount = self.accountant.spent(self._pure_amount(epsilons, bounded_range))
        if delta == "split":
            delta = 0.0 if self.accountant.splits_delta else None
        fields = self.accountant.pure_fields(amount, sum(epsilons, Fraction(0)))
        return Share(self.accounting, delta=delta, **fields)

    def _pure_amount(self, epsilons: Iterable[Fraction], bounded_range: bool) -> Fraction:
        return self.accountant.pure_amount(epsilons, bounded_range)

    def split(self, parts: int) -> Share:
        """1/parts of this share (basic composition: ε, δ and ρ add up), rounded down."""
        return self.scaled(Fraction(1, parts))

    def scaled(self, factor: Fraction) -> Share:
        """factor × this share, each number rounded down so the parts never add up to more."""

        def part(value: float | None) -> float | None:
            if value is None:
                return None
            exact = Fraction(value) * factor
            result = float(exact)
            return math.nextafter(result, 0.0) if Fraction(result) > exact else result

        return Share(self.accounting, part(self.epsilon), part(self.delta), part(self.rho))


@dataclass(frozen=True)
class StatContext:
    """max_rows m, the neighbour relation, and whether the statistic is split by groups."""

    max_rows: int = 1
    neighbors: Neighbors = "add_remove"
    grouped: bool = True

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_rows, bool)
            or not isinstance(self.max_rows, int)
            or self.max_rows < 1
        ):
            raise InternalError(f"max_rows must be a whole number ≥ 1, got {self.max_rows!r}")
        if self.neighbors not in ("add_remove", "replace"):
            raise PlanError(
                f"neighbors must be 'add_remove' or 'replace', got {quote(self.neighbors)}."
            )

    @property
    def symmetric_distance(self) -> int:
        """Rows one group's data can gain plus lose: m (add/remove) or 2m (replace)."""
        return self.max_rows if self.neighbors == "add_remove" else 2 * self.max_rows
