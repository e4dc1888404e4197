"""Issue 36: the budget's allocator asks the accountant it was handed, and the accountant owns
the exact arithmetic (a spend rounded up, a grant or what is left rounded down).

The statistics' allocation (`stats/allocation.py`) and a statistic's `Share`
(`stats/budget.py`) import no rounding helper of `accounting/composition.py` and look no
accountant up by name: the plan's accountant is settled once
(`accounting.allocation.plan_accountant`) and passed down."""

from __future__ import annotations

import ast
import math
from fractions import Fraction

import pytest

from dprelease.accounting.accountants.registry import ACCOUNTANTS
from dprelease.accounting.composition import Guarantee
from helpers import ROOT
from helpers.plans import make_plan

ASKING = ("dprelease/stats/allocation.py", "dprelease/stats/budget.py")
LOOKUPS = {"settled", "chosen", "accountant", "forced", "first"}


def _imported(path: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse((ROOT / path).read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.setdefault(node.module, set()).update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", ASKING)
def test_the_allocator_asks_the_accountant(path: str) -> None:
    imported = _imported(path)
    assert "dprelease.accounting.composition" not in imported, "ask the accountant instead"
    names = imported.get("dprelease.accounting.accountants.registry", set())
    assert not names & LOOKUPS, "the accountant is settled once and passed down"


def test_rounding_directions() -> None:
    third = Fraction(1, 3)
    for accountant in ACCOUNTANTS.values():
        assert Fraction(accountant.granted(third)) < third < Fraction(accountant.spent(third))
        assert accountant.granted(Fraction(1, 2)) == accountant.spent(Fraction(1, 2)) == 0.5
        assert accountant.exact_total([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2)


def test_counts_budget_rounds_what_is_left_down_and_names_its_accountant() -> None:
    plan = make_plan(accounting="auto")
    left, delta = Fraction(2, 3), Fraction(1, 3 * 10**10)
    for accountant in ACCOUNTANTS.values():
        budget = accountant.counts_budget(plan.budget, left, delta)
        amount = budget.rho if accountant.in_rho else budget.epsilon
        assert amount is not None and budget.delta is not None
        assert Fraction(amount) <= left and math.nextafter(amount, 1.0) > left
        assert Fraction(budget.delta) <= delta
        assert budget.accounting == accountant.name
        assert accountant.counts_budget(plan.budget, left, None).delta == plan.budget.delta


def test_the_release_is_checked_against_the_plans_total() -> None:
    budget = make_plan(accounting="zcdp", epsilon=1.0, delta=1e-10).budget
    zcdp = ACCOUNTANTS["zcdp"]
    inside = Guarantee(1.0, 1e-10, 0.01, "zcdp")
    over = Guarantee(math.nextafter(1.0, 2.0), 1e-10, 0.01, "zcdp")
    assert zcdp.release_fits(inside, budget) and not zcdp.release_fits(over, budget)
    assert zcdp.release_checked(inside, budget) is inside
    with pytest.raises(Exception, match="overspends"):
        zcdp.release_checked(over, budget)
