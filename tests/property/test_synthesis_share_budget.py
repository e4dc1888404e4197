"""A synthesis share never overspends (issue 38.6): for any share S, total and accountant, the
release's composed guarantee is within the plan's total, the share's parts within the share,
and the share is S of the total rounded down (checked exactly, in `Fraction`s)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.accounting.composition import round_down
from dprelease.accounting.typed_budget import spendable_plan
from dprelease.plan.parse import parse_plan
from dprelease.stats.allocation import allocate

LEVELS = ["a", "b", "c", "d"]


def _plan(share: float, epsilon: float, accounting: str, weights: list[float]) -> Any:
    domain = {"kind": "categorical", "domain": LEVELS}
    budget: dict[str, Any] = {"accounting": accounting, "epsilon": epsilon}
    if accounting != "pure":
        budget["delta"] = 1e-9
    return parse_plan(
        {
            "version": 1,
            "columns": {name: domain for name in ("p", "q", "r", "s")},
            "tables": [
                {"name": "p", "by": ["p"], "weight": weights[0]},
                {"name": "pq", "by": ["p", "q"], "weight": weights[1]},
                {"name": "r", "by": ["r"], "weight": weights[2]},
            ],
            "budget": budget,
            "postprocess": {"synthetic": {"budget_share": share}},
        }
    )


@settings(max_examples=40, deadline=None)
@given(
    share=st.floats(min_value=1e-3, max_value=0.999),
    epsilon=st.floats(min_value=0.05, max_value=20),
    accounting=st.sampled_from(["pure", "zcdp", "renyi", "advanced", "approx"]),
    weights=st.lists(st.floats(min_value=0.1, max_value=10), min_size=3, max_size=3),
)
def test_the_share_and_the_tables_never_overspend(
    share: float, epsilon: float, accounting: str, weights: list[float]
) -> None:
    plan = _plan(share, epsilon, accounting, weights)
    allocation = allocate(plan)
    synthesis = allocation.synthesis
    assert synthesis is not None
    assert Fraction(allocation.total.epsilon) <= Fraction(epsilon)
    if allocation.total.delta is not None:
        assert Fraction(allocation.total.delta) <= Fraction(1e-9)
    assert synthesis.spent <= Fraction(synthesis.share.amount)
    accountant = synthesis.share.accountant
    if not accountant.splits_delta and accountant.name != "renyi":  # renyi may grow shares
        priced = spendable_plan(plan).budget  # the typed decimals' floats (issue 37.4)
        delta = None if priced.delta is None else Fraction(priced.delta)
        total, _ = accountant.statistics_total(priced, delta)
        assert Fraction(synthesis.share.amount) == Fraction(round_down(total * Fraction(share)))
