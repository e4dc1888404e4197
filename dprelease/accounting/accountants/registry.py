"""The registry of accountants, and `auto`: the one place an accountant's name is looked up.

To add an accountant: write its module (an `Accountant` subclass, its `Target` and one
instance) and list the instance in `ACCOUNTANTS`. `auto` is not an accountant but a choice
made per plan: the plan's own settings may leave only one (`forced`), else the strategy's
expected error decides among those that `chooses_strategy` (`allocation.resolve_accounting`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dprelease.accounting.accountants.advanced import ADVANCED
from dprelease.accounting.accountants.approx import APPROX
from dprelease.accounting.accountants.base import Accountant, Unit
from dprelease.accounting.accountants.pure import PURE
from dprelease.accounting.accountants.renyi import RENYI
from dprelease.accounting.accountants.zcdp import ZCDP
from dprelease.errors import InternalError, PlanError, quote

if TYPE_CHECKING:
    from dprelease.plan.model import Budget, Plan

ACCOUNTANTS: dict[str, Accountant] = {a.name: a for a in (PURE, ZCDP, APPROX, ADVANCED, RENYI)}
AUTO = "auto"  # the plan's default: the accountant is chosen per plan
AUTO_LABEL = "auto: the accountant with the least expected error"


def choices() -> tuple[str, ...]:
    """What the plan's `budget.accounting` may say: `auto`, then every accountant's name."""
    return (AUTO, *ACCOUNTANTS)


def labels() -> dict[str, str]:
    """Each choice's text for people (the dashboard's select box), in the order of `choices`."""
    return {AUTO: AUTO_LABEL} | {a.name: a.label for a in ACCOUNTANTS.values()}


def accountant(name: str) -> Accountant:
    """The accountant called `name` (not `auto`); an unknown name is a bug here, the plan's
    own words are checked by `plan_problems`."""
    found = ACCOUNTANTS.get(name)
    if found is None:
        raise InternalError(f"unknown accountant {quote(name)} (known: {', '.join(ACCOUNTANTS)})")
    return found


def is_auto(name: str) -> bool:
    """True when the plan leaves the accountant to `auto`."""
    return name == AUTO


def chosen(budget: Budget) -> Accountant | None:
    """The plan's accountant, or None under `auto` (not settled yet); an unknown name is the
    plan's problem (a `PlanError`)."""
    if is_auto(budget.accounting):
        return None
    found = ACCOUNTANTS.get(budget.accounting)
    if found is None:
        raise PlanError(_unknown(budget.accounting))
    return found


def _unknown(name: str) -> str:
    return f"budget.accounting must be one of {', '.join(choices())}, got {quote(name)}."


def settled(budget: Budget) -> Accountant:
    """The budget's accountant once `auto` has been settled (`allocation.allocate` does)."""
    found = chosen(budget)
    if found is None:
        raise InternalError("accounting: auto must be settled before the budget is split.")
    return found


def lock_unit(name: str) -> Unit:
    """The unit a table's lock is written in under the plan's `accounting` (ε under `auto`)."""
    found = ACCOUNTANTS.get(name)
    return "epsilon" if found is None else found.unit


def takes_rho(name: str) -> bool:
    """True when the plan's `accounting` may be given a total ρ (`auto` settles on an
    accountant in ρ then)."""
    found = ACCOUNTANTS.get(name)
    return is_auto(name) or (found is not None and found.in_rho)


def takes_delta(name: str) -> bool:
    """True when the plan's `accounting` uses a δ (`auto` may: it compares those with δ)."""
    found = ACCOUNTANTS.get(name)
    return is_auto(name) or (found is not None and found.needs_delta)


def strategy_accountants(delta: float | None) -> tuple[Accountant, ...]:
    """The accountants `accounting: auto` compares: those of the strategy (with δ), else
    those without δ."""
    return tuple(
        a
        for a in ACCOUNTANTS.values()
        if a.chooses_strategy and (delta is not None or not a.needs_delta)
    )


def forced(plan: Plan) -> Accountant | None:
    """The accountant the plan's own settings leave no choice about, under `auto`.

    ρ (total or a table's lock) needs an accountant in ρ; a table's δ lock one that splits δ;
    without δ only one without δ is possible. None: the strategy's expected error decides."""
    fixed = chosen(plan.budget)
    if fixed is not None:
        return fixed
    budget = plan.budget
    if budget.rho is not None or any(s.rho is not None for s in plan.tables):
        return first(lambda a: a.in_rho, "in ρ")
    if any(s.delta is not None for s in plan.tables):
        return first(lambda a: a.splits_delta, "that splits δ")
    if budget.delta is None:
        return first(lambda a: not a.needs_delta, "without δ")
    return None


def first(rule: Callable[[Accountant], bool], what: str) -> Accountant:
    """The first accountant `auto` may choose (one that `chooses_strategy`) that `rule` allows."""
    for candidate in ACCOUNTANTS.values():
        if candidate.chooses_strategy and rule(candidate):
            return candidate
    raise InternalError(f"accounting: auto has no accountant {what}")


def plan_problems(plan: Plan) -> list[str]:
    """What is wrong with the plan's `budget.accounting` and the settings it rules (ρ, δ,
    table and statistic locks), each problem one line."""
    budget = plan.budget
    found = (
        chosen(budget) if is_auto(budget.accounting) or budget.accounting in ACCOUNTANTS else None
    )
    if found is None and not is_auto(budget.accounting):
        return [
            f"budget.accounting must be one of {', '.join(choices())}, "
            f"got {quote(budget.accounting)}."
        ]
    problems = (
        _auto_problems(budget) if found is None else found.budget_problems(budget, plan.tables)
    )
    for statistic in plan.statistics:
        if statistic.table.rho is not None and (found is None or not found.in_rho):
            problems.append(
                f"Table {quote(statistic.name)} locks rho, which only zcdp accounting uses."
            )
    return problems


def _auto_problems(budget: Budget) -> list[str]:
    if budget.rho is not None and budget.delta is None:
        return ["budget.rho needs budget.delta (e.g. delta: 1.0e-10) to state ε."]
    return []


def check_plan(plan: Plan) -> None:
    """Raise the plan's accounting problems at once (a `PlanError`), if any."""
    problems = plan_problems(plan)
    if problems:
        raise PlanError.from_problems(problems)
