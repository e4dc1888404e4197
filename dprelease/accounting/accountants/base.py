"""What every accountant provides: one object per way of composing a release's privacy loss.

An accountant is the plan's `budget.accounting` made an object (see `registry`). The rest of
the code asks it for its unit, its mechanism, its budget value (`target`), how shares are
split and composed, and what the strategy and the statistics need, and never compares its
name. Adding an accountant means writing its module and listing it in the registry.

A budget, once its accountant is known, is a `Target`: a value with exactly the fields that
accountant uses, and its additive `amount` (ε, or ρ), so the allocators need no branches on
its type.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar, Literal

from dprelease.accounting.composition import (
    Guarantee,
    check_within,
    exact_sum,
    reported_total,
    round_down,
    round_up,
)
from dprelease.accounting.mechanisms import Mechanism, Noise
from dprelease.errors import BudgetError, InternalError, quote

if TYPE_CHECKING:
    from dprelease.plan.model import Budget
    from dprelease.plan.table_spec import Sensitivity, TableSpec

Unit = Literal["epsilon", "rho"]
UNIT_SYMBOLS = {"epsilon": "ε", "rho": "ρ"}  # a unit's letter for people
Shape = Literal["laplace", "gaussian"]  # the strategy's error model: L1 or L2 noise
Fields = tuple[float | None, float | None, float | None]  # (ε, δ, ρ) of one measurement


@dataclass(frozen=True)
class ReleaseParts:
    """What a whole release is composed of, for `Accountant.release_guarantee`."""

    statistics: Sequence[Fields]  # each statistic's cost (ε, δ, ρ)
    counts: Guarantee | None  # the count tables' own total (None: no count table)
    count_rhos: Sequence[float]  # each count measurement's ρ
    delta_left: Fraction | None  # the δ the discoveries leave for a conversion
    order: float | None  # the Rényi order that certified the total budget, if one did


class Target(ABC):
    """A plan's total budget as the value its accountant composes: each accountant's subclass
    has exactly the fields it uses (ε; ε and δ; ρ and δ), and `amount` is its additive total."""

    epsilon: float | None
    delta: float | None

    @property
    @abstractmethod
    def accountant(self) -> Accountant:
        """The accountant this budget belongs to."""

    @property
    @abstractmethod
    def amount(self) -> float:
        """The total in the accountant's additive unit (ε, or ρ)."""

    def rho_total(self) -> float | None:
        """The budget's ρ, for an accountant whose shares add up in ρ (else None)."""
        return None

    def as_epsilon(self) -> float:
        """The budget's ε (under zCDP the plan's, or ρ's at δ): what the strategy states."""
        if self.epsilon is None:
            raise InternalError(f"{self.accountant.name}: a budget without ε")
        return self.epsilon

    def epsilon_delta(self) -> tuple[float, float]:
        """(ε, δ) of a budget that states both (an (ε, δ) accountant's)."""
        if self.epsilon is None or self.delta is None:
            raise InternalError(f"{self.accountant.name}: a budget without (ε, δ)")
        return self.epsilon, self.delta


class Accountant(ABC):
    """One accountant: what it is called and shown as, its unit and noise, and its maps."""

    name: ClassVar[str]  # the plan's `budget.accounting` (contract v1)
    label: ClassVar[str]  # the dashboard's choice, for people
    description: ClassVar[str]  # the release report's line, for people
    unit: ClassVar[Unit]  # the additive unit of its shares
    needs_delta: ClassVar[bool]  # its guarantee is (ε, δ): the plan must give δ
    splits_delta: ClassVar[bool] = False  # δ is split among tables; a table may lock δ
    mechanism: ClassVar[Mechanism]  # the noise of its count tables
    chooses_strategy: ClassVar[bool] = False  # `strategy: auto` and `accounting: auto` know it
    strategy_shape: ClassVar[Shape] = "gaussian"  # how the strategy optimises its shares
    priced_as_set: ClassVar[bool] = False  # listed tables are priced at once (one Gaussian)
    additive: ClassVar[bool] = True  # shares add up to the total (else scaled until it fits)
    hosts_discovery: ClassVar[bool] = False  # `auto` may compose (ε, δ) discoveries in it
    slow_first_certificate: ClassVar[bool] = False  # composes a PLD: the dashboard warms it up

    def __repr__(self) -> str:
        return f"<accountant {self.name}>"

    @property
    def symbol(self) -> str:
        """The unit's letter for people (ε or ρ)."""
        return UNIT_SYMBOLS[self.unit]

    def lock_fields(self, value: float | None) -> dict[str, float | None]:
        """A table's lock of `value` in this accountant's unit, the other unit's field cleared
        (a plan table locks ε or ρ, never both)."""
        return {unit: value if unit == self.unit else None for unit in UNIT_SYMBOLS}

    @property
    def in_rho(self) -> bool:
        """True when shares add up in ρ (zCDP), else in ε."""
        return self.unit == "rho"

    # --- the plan's budget ------------------------------------------------------------------

    @abstractmethod
    def target(self, budget: Budget) -> Target:
        """The plan's budget as this accountant's value (its fields checked)."""

    def budget_problems(self, budget: Budget, tables: Sequence[TableSpec]) -> list[str]:
        """What the plan's budget and locks give that this accountant cannot use."""
        problems = []
        if budget.rho is not None and not self.in_rho:
            problems.append("budget.rho is for zcdp accounting only; give epsilon instead.")
        if self.needs_delta and budget.delta is None:
            problems.append(
                f"budget.delta is required with {self.name} accounting "
                "(e.g. delta: 1.0e-10); only pure accounting works without it."
            )
        for spec in tables:
            where = f"Table {quote(spec.name)}"
            if spec.rho is not None and not self.in_rho:
                problems.append(
                    f"{where} locks rho, which only zcdp accounting uses; lock epsilon instead."
                )
            elif spec.delta is not None and not self.splits_delta:
                problems.append(f"{where} locks delta, which only approx accounting splits.")
        return problems

    def counts_budget(self, budget: Budget, left: Fraction, delta: Fraction | None) -> Budget:
        """The budget of the count tables once statistics took theirs, under this accountant:
        what is `left` in the unit, and its δ (None: the plan's), each rounded down."""
        granted = budget.delta if delta is None else round_down(delta)
        counts = self._counts_budget(budget, round_down(left), granted)
        return replace(counts, accounting=self.name)

    def _counts_budget(self, budget: Budget, amount: float, delta: float | None) -> Budget:
        return replace(budget, epsilon=amount, delta=delta)

    def spare_scale(self, parts: ReleaseParts, budget: Budget) -> Fraction:
        """How much every share of a release composed of `parts` may grow and its guarantee
        still fit the plan's total: 1 where the composition states the total it was given
        (what the allocator splits is already all there is)."""
        return Fraction(1)

    def statistics_total(
        self, budget: Budget, delta: Fraction | None
    ) -> tuple[Fraction, float | None]:
        """The total in the additive unit when statistics share it, and the CKS order behind a
        ρ derived from ε at `delta` (None: no conversion)."""
        if budget.epsilon is None:
            raise BudgetError("budget.epsilon is required (or budget.rho under zcdp).")
        return Fraction(budget.epsilon), None

    # --- exact arithmetic: a spend is rounded up, a grant (a share, what is left) down -------

    @staticmethod
    def granted(value: Fraction) -> float:
        """The largest float ≤ an exact share or remainder: what may be spent of it."""
        return round_down(value)

    @staticmethod
    def spent(value: Fraction) -> float:
        """The smallest float ≥ an exact cost: what is charged for it."""
        return round_up(value)

    @staticmethod
    def exact_total(values: Iterable[float]) -> Fraction:
        """Floats added exactly (shares, costs)."""
        return exact_sum(values)

    def pure_amount(self, epsilons: Iterable[Fraction], bounded_range: bool = False) -> Fraction:
        """What ε-DP mechanisms with these ε's cost together in this unit, exactly."""
        return sum((self.of_epsilon(Fraction(e), bounded_range) for e in epsilons), Fraction(0))

    # --- shares -------------------------------------------------------------------------------

    def of_epsilon(self, epsilon: Fraction, bounded_range: bool = False) -> Fraction:
        """A lock of ε-DP in this accountant's unit (ε itself, unless overridden)."""
        return epsilon

    def pure_epsilon(self, amount: float, bounded_range: bool = False) -> float:
        """The largest ε (a float) of an ε-DP mechanism whose exact cost in this unit
        (`of_epsilon`) fits `amount`: what a share buys for a Laplace or exponential draw,
        so that statistics never ask which unit the share is in (ε itself, unless
        overridden)."""
        return amount

    def lock(self, epsilon: float) -> float:
        """A table's ε lock in this accountant's unit, as a float (ε itself, unless overridden)."""
        return epsilon

    def pure_fields(self, amount: float, epsilon: Fraction) -> dict[str, float]:
        """The fields of an ε-DP statistic's cost: `amount` in the unit (`epsilon`: the pure
        ε it satisfies, for an accountant whose curves use it)."""
        return self.unit_fields(amount)

    def unit_fields(self, amount: float) -> dict[str, float]:
        """A share's keyword in its unit: {"epsilon": amount} or {"rho": amount}."""
        return {self.unit: amount}

    def fields(self, share: float, delta: float | None = None) -> Fields:
        """(ε, δ, ρ) of one measurement whose share is `share` in the unit."""
        return (None, delta, share) if self.in_rho else (share, delta, None)

    @abstractmethod
    def target_share(self, goal: float, alpha: float, sens: Sensitivity, delta: float) -> float:
        """The smallest share whose margin of error at α meets `goal` (δ: the table's)."""

    @abstractmethod
    def optimal_split(
        self, weights: Sequence[float], deltas: Sequence[float], sens: Sensitivity, room: float
    ) -> list[float]:
        """Shares of `room` that minimise the weighted variance of free tables."""

    def table_noise(self, share: float, sens: Sensitivity) -> Noise:
        """The noise one table's share buys, its scale rounded up and checked exactly."""
        raise InternalError(f"{self.name} tables are priced as a set, not one by one")

    def statistic_noise(self, amount: float, delta: float | None, sens: Sensitivity) -> Noise:
        """The noise a statistic's share (`amount` in this unit, and its δ) buys for a sum
        of this sensitivity: the accountant's own mechanism (its tables' noise, unless
        overridden), so that a statistic never asks which unit its share is in."""
        return self.table_noise(amount, sens)

    def strategy_noises(
        self,
        shape: Sequence[float],
        sens: Sensitivity,
        epsilon: float,
        delta: float | None,
        rho: float | None,
    ) -> tuple[list[float], list[Noise], float | None]:
        """The strategy's shape rounded into shares that fit exactly, the noise each buys, and
        the total ρ where there is one (`strategy.select`)."""
        raise InternalError(f"the strategy has no {self.name} accountant")

    # --- composition --------------------------------------------------------------------------

    def composition_text(self, composition: str) -> str:
        """How a guarantee of this accountant was composed, for people ("zcdp composition")."""
        return f"{composition} composition"

    def release_guarantee(self, parts: ReleaseParts) -> Guarantee:
        """A whole release's guarantee: the statistics' costs composed with the count tables'
        own total, here by adding ε's and δ's (no check against the target)."""
        epsilon = exact_sum(e or 0.0 for e, _, _ in parts.statistics)
        delta = exact_sum(d or 0.0 for _, d, _ in parts.statistics)
        composition = "basic"
        if parts.counts is not None:
            epsilon += Fraction(parts.counts.epsilon or 0.0)
            delta += Fraction(parts.counts.delta or 0.0)
            composition = parts.counts.composition
        total_delta = round_up(delta) if self.needs_delta else None
        return Guarantee(round_up(epsilon), total_delta, None, composition)

    def release_fits(self, guarantee: Guarantee, budget: Budget) -> bool:
        """Whether a release's guarantee is within the plan's total (ρ, ε and δ as given)."""
        pairs = [
            (guarantee.rho, budget.rho),
            (guarantee.epsilon, budget.epsilon),
            (guarantee.delta, budget.delta),
        ]
        return all(
            spent is None or given is None or Fraction(spent) <= Fraction(given)
            for spent, given in pairs
        )

    def release_checked(self, guarantee: Guarantee, budget: Budget) -> Guarantee:
        """A whole release's guarantee, checked against the plan's total (the last defence)."""
        if budget.rho is not None and guarantee.rho is not None:
            check_within(Fraction(guarantee.rho), Fraction(budget.rho), "rho")
        if budget.epsilon is not None:
            check_within(Fraction(guarantee.epsilon), Fraction(budget.epsilon), "epsilon")
        if budget.delta is not None and guarantee.delta is not None:
            check_within(Fraction(guarantee.delta), Fraction(budget.delta), "delta")
        return guarantee

    @staticmethod
    def reported(total: Guarantee, budget: Budget) -> Guarantee:
        """The composed total as files and messages report it against the plan's typed
        budget (`composition.reported_total`)."""
        return reported_total(total, budget.epsilon, budget.delta, budget.rho)

    @abstractmethod
    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        """The guarantee of tables with these shares (no check against the target)."""

    def required(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        """What fixed shares alone need (allocation: targets): their composed guarantee."""
        return self.compose(target, shares, deltas)

    def measured(
        self,
        target: Target,
        noises: Sequence[Noise],
        sens: Sensitivity,
        shares: Sequence[float | None],
    ) -> Guarantee:
        """The guarantee of the strategy's measurements (their noise, and their shares in the
        unit where they have one), checked against the target."""
        raise InternalError(f"the strategy has no {self.name} accountant")

    def checked(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        """The guarantee of the whole release, checked against the plan's target."""
        guarantee = self.compose(target, shares, deltas)
        if target.epsilon is not None:
            check_within(Fraction(guarantee.epsilon), Fraction(target.epsilon), "epsilon")
        return guarantee
