"""Which detailed tables are worth their budget? The sparse vector, charged like a release.

"Which of these candidate tables have a cell above T?" Query i is the largest true cell of
candidate table i (Δ = max_rows, `sparse_vector.largest_cells`); Sparse(c) answers ⊤/⊥ in
order with OpenDP's secure discrete Laplace on the threshold and on each query and halts
after c positives, at a cost of ε whatever the number of candidates. The answer is charged to
the data set's ledger as a spend of its own (pure ε, δ = 0), inside the charge like a release:
the draw happens only if the charge fits, and nothing is shown before it commits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from dprelease.accounting.accountants.pure import PURE
from dprelease.accounting.composition import Guarantee
from dprelease.data.count import TrueCounts
from dprelease.errors import PlanError, quote
from dprelease.plan.model import Plan
from dprelease.release.publish import Account
from dprelease.release.stat_noise import SECURE
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.sparse_vector import (
    SparseAnswer,
    calibrate_sparse_vector,
    largest_cells,
    noise_source,
    sparse_vector,
)


@dataclass(frozen=True)
class Question:
    """Which of `names` have a cell above `threshold`? At ε, halting after `max_positives`."""

    names: tuple[str, ...]
    threshold: int
    epsilon: float
    max_positives: int


@dataclass(frozen=True)
class Suggestion:
    """Public: the candidates in order, the answer (True: has a cell above T; None: not asked
    because Sparse(c) halted) and what it cost."""

    candidates: tuple[str, ...]
    threshold: int
    answer: SparseAnswer
    epsilon: float


def candidates_plan(plan: Plan, names: Sequence[str]) -> Plan:
    """The plan restricted to the candidate count tables (to count them)."""
    chosen = [t for t in plan.tables if t.name in names]
    missing = [n for n in names if n not in {t.name for t in chosen}]
    if missing or not chosen:
        raise PlanError(f"Pick candidate count tables of the plan (unknown: {quote(missing)}).")
    return dataclasses.replace(plan, tables=tuple(chosen), statistics=(), discoveries=())


def suggest(plan: Plan, true_counts: TrueCounts, question: Question) -> Suggestion:
    """Run Sparse(c) over the candidates' largest cells (secure noise; not charged here)."""
    svt = calibrate_sparse_vector(
        question.threshold,
        question.max_positives,
        Share(PURE.name, epsilon=question.epsilon),
        StatContext(plan.unit.max_rows, plan.neighbors),
    )
    answers = largest_cells([true_counts.counts[name] for name in question.names])
    result = sparse_vector(answers, svt, noise_source(SECURE, svt.sensitivity))
    cost = float(svt.cost.epsilon or question.epsilon)
    return Suggestion(question.names, question.threshold, result, cost)


def charged_suggestion(
    plan: Plan,
    true_counts: TrueCounts,
    question: Question,
    *,
    account: Account,
    release_id: str,
) -> Suggestion:
    """`suggest`, drawn inside the ledger's charge of ε (refused if it does not fit the cap)."""
    names = question.names
    with account.charge(
        release_id,
        Guarantee(epsilon=question.epsilon, delta=None),
        label=f"sparse vector: which of {len(names)} tables have a cell above {question.threshold}",
        tables=list(names),
    ):
        return suggest(plan, true_counts, question)
