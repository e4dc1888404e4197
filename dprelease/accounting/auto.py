"""`accounting: auto`: the accountant whose strategy gives the least expected workload error.

`auto` is not an accountant but a resolution step (`allocation.resolve_accounting`): the
plan's settings may leave one accountant only (`accountants.registry.forced`), else this
module compares the candidates' strategies.

Each accountant that `chooses_strategy` (pure: discrete Laplace, zcdp: discrete Gaussian,
approx: Gaussian, composed exactly as one Gaussian mechanism) gets its own optimised strategy
at the user's (ε, δ); the smallest weighted per-cell MSE wins. Without δ only those without δ
(pure) are possible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dprelease.accounting.accountants.registry import strategy_accountants
from dprelease.accounting.mechanisms import Noise
from dprelease.plan.schema import Schema
from dprelease.plan.table_spec import Sensitivity
from dprelease.strategy.select import (
    Strategy,
    StrategyAccounting,
    StrategyKind,
    WorkloadTable,
    select_strategy,
)


@dataclass(frozen=True)
class AccountantChoice:
    """The winner, every candidate's strategy, and how much worse each one is than the winner."""

    winner: StrategyAccounting
    strategies: tuple[Strategy[Noise], ...]

    @property
    def chosen(self) -> Strategy[Noise]:
        return next(s for s in self.strategies if s.accounting == self.winner)

    def ratio(self, accounting: StrategyAccounting) -> float:
        """That accountant's expected workload error ÷ the winner's (≥ 1)."""
        other = next(s for s in self.strategies if s.accounting == accounting)
        return other.workload_error / self.chosen.workload_error

    def to_dict(self) -> dict[str, object]:
        """For `plan --json`: the winner and each candidate's expected weighted per-cell MSE."""
        return {
            "winner": self.winner,
            "expected_mse": {s.accounting: s.workload_error for s in self.strategies},
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line for the Budget page: who won and by how much."""
        others = [s.accounting for s in self.strategies if s.accounting != self.winner]
        if not others:
            return f"{self.winner}: the only accountant without delta."
        parts = ", ".join(f"{a} ×{self.ratio(a):.2f}" for a in others)
        return f"{self.winner}, the least expected error (expected MSE of the others: {parts})."


def choose_accountant(
    schema: Schema,
    tables: Sequence[WorkloadTable],
    sens: Sensitivity,
    epsilon: float,
    delta: float | None,
    kind: StrategyKind = "auto",
) -> AccountantChoice:
    strategies = tuple(
        select_strategy(schema, tables, sens, a, epsilon, delta, kind)
        for a in strategy_accountants(delta)
    )
    best = min(strategies, key=lambda s: s.workload_error)
    return AccountantChoice(winner=best.accounting, strategies=strategies)
