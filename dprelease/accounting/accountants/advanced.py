"""`advanced`: ε-DP tables of discrete Laplace noise, composed by the advanced composition
theorem at the plan's δ (or basically, where that is tighter)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.base import Accountant, Target
from dprelease.accounting.accountants.pure import LaplaceTables, delta_of, epsilon_of
from dprelease.accounting.composition import Guarantee, advanced_or_basic

if TYPE_CHECKING:
    from dprelease.plan.model import Budget


@dataclass(frozen=True)
class AdvancedTarget(Target):
    epsilon: float
    delta: float

    @property
    def accountant(self) -> Accountant:
        return ADVANCED

    @property
    def amount(self) -> float:
        return self.epsilon


class Advanced(LaplaceTables):
    name = "advanced"
    label = "advanced composition (Laplace noise, (ε, δ))"
    description = "ε-DP mechanisms, advanced composition (or basic where tighter)"
    unit = "epsilon"
    needs_delta = True
    additive = False  # the advanced bound is not a sum: shares are scaled until ε is reached

    def target(self, budget: Budget) -> AdvancedTarget:
        return AdvancedTarget(epsilon_of(budget, self.name), delta_of(budget, self.name))

    def composition_text(self, composition: str) -> str:
        if composition == "basic":  # issue 37: say why advanced reads "basic"
            return (
                "basic composition (tighter than advanced composition for these tables, so δ = 0)"
            )
        return super().composition_text(composition)

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return advanced_or_basic(shares, _delta(target))


def _delta(target: Target) -> float:
    if target.delta is None:  # AdvancedTarget always has one; for the type checker
        raise ValueError("advanced composition needs delta")
    return target.delta


ADVANCED = Advanced()
