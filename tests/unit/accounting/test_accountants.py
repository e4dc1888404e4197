"""The accountants as objects in a registry (issue 26): what each one provides, `auto` as a
resolution step, and that adding one is its module plus one registry line.

The contract below runs over every registered accountant, so an accountant added to the
registry is checked by it at once; `test_a_new_accountant_is_one_module_and_one_line` adds a
toy one (in a temporary copy of the registry) and follows it through a plan, the allocation,
the statistics' shares, the dashboard's choices and the release report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from dprelease.accounting.accountants import registry
from dprelease.accounting.accountants.base import Accountant, Target
from dprelease.accounting.accountants.pure import LaplaceTables, epsilon_of
from dprelease.accounting.allocation import allocate
from dprelease.accounting.composition import Guarantee, basic_composition, exact_sum
from dprelease.accounting.mechanisms import MECHANISMS
from dprelease.data.count import count, load_data
from dprelease.errors import InternalError, PlanError
from dprelease.plan.model import Budget, default_of
from dprelease.plan.parse import parse_plan
from dprelease.release.draw import draw_release
from dprelease.release.report import report_html
from dprelease.stats.budget import Share
from helpers.plans import plan_dict


def budget_for(accountant: Accountant, **more: object) -> dict[str, object]:
    """A plan budget this accountant accepts: ε, and δ where it needs one."""
    budget: dict[str, object] = {"accounting": accountant.name, "epsilon": 1.0, **more}
    budget["delta"] = 1e-10 if accountant.needs_delta else None
    return budget


@pytest.mark.parametrize("accountant", list(registry.ACCOUNTANTS.values()), ids=str)
def test_each_accountant_states_what_it_is(accountant: Accountant) -> None:
    assert registry.accountant(accountant.name) is accountant
    assert re.fullmatch(r"[a-z][a-z0-9_]*", accountant.name)
    assert accountant.label and accountant.description
    assert accountant.unit in ("epsilon", "rho")
    assert MECHANISMS[accountant.mechanism.name] is accountant.mechanism
    assert accountant.splits_delta <= accountant.needs_delta  # δ is split only where it is
    share = Share(accountant.name, **accountant.unit_fields(0.25))
    assert share.accountant is accountant and share.amount == 0.25


@pytest.mark.parametrize("accountant", list(registry.ACCOUNTANTS.values()), ids=str)
@pytest.mark.parametrize("allocation", ["equal", "optimal"])
def test_each_accountant_allocates_within_its_budget(
    accountant: Accountant, allocation: str
) -> None:
    plan = parse_plan(plan_dict(**budget_for(accountant, allocation=allocation)))
    result = allocate(plan)
    assert result.accountant is accountant and result.accounting == accountant.name
    assert Fraction(result.total.epsilon) <= Fraction(1.0)
    assert {t.noise.mechanism for t in result.measurements} == {accountant.mechanism.name}
    if accountant.in_rho:
        rhos = [m.rho for m in result.measurements]
        assert None not in rhos and result.total.rho is not None
        assert exact_sum(r for r in rhos if r is not None) <= Fraction(result.total.rho)


@pytest.mark.parametrize("accountant", list(registry.ACCOUNTANTS.values()), ids=str)
def test_each_accountant_refuses_what_it_cannot_use(accountant: Accountant) -> None:
    if not accountant.in_rho:
        raw = plan_dict(**budget_for(accountant))
        raw["budget"].update(epsilon=None, rho=0.01, delta=1e-10)
        with pytest.raises(PlanError, match=r"budget\.rho is for zcdp accounting only"):
            allocate(parse_plan(raw))
    if accountant.needs_delta:
        raw = plan_dict(**budget_for(accountant))
        raw["budget"]["delta"] = None
        with pytest.raises(PlanError, match=f"delta is required with {accountant.name}"):
            allocate(parse_plan(raw))


def test_the_plan_keeps_its_text_and_auto_is_a_choice_not_an_accountant() -> None:
    assert default_of(Budget, "accounting") == registry.AUTO
    assert registry.AUTO not in registry.ACCOUNTANTS
    assert registry.choices() == (registry.AUTO, *registry.ACCOUNTANTS)
    assert list(registry.labels()) == list(registry.choices())
    with pytest.raises(InternalError):
        registry.accountant(registry.AUTO)
    # auto settles on an object: only pure without δ, the ρ accountant with ρ
    assert registry.forced(parse_plan(plan_dict(accounting="auto", delta=None))) is not None
    with_rho = plan_dict(accounting="auto", epsilon=None, rho=0.01)
    assert registry.forced(parse_plan(with_rho)).in_rho  # type: ignore[union-attr]
    chosen = allocate(parse_plan(plan_dict(accounting="auto")))
    assert chosen.accountant.chooses_strategy


def test_an_unknown_accountant_is_one_plan_problem() -> None:
    plan = parse_plan(plan_dict(accounting="moments"))
    with pytest.raises(PlanError, match=r"budget\.accounting must be one of auto, pure"):
        allocate(plan)


# --- adding an accountant ----------------------------------------------------------------------


@dataclass(frozen=True)
class ToyTarget(Target):
    epsilon: float
    delta: None = None

    @property
    def accountant(self) -> Accountant:
        return TOY

    @property
    def amount(self) -> float:
        return self.epsilon


class Toy(LaplaceTables):
    """A toy accountant: ε-DP discrete Laplace tables, basic composition, no strategy."""

    name = "toy"
    label = "toy ε-DP (for the registry's test)"
    description = "a toy accountant"
    unit = "epsilon"
    needs_delta = False

    def target(self, budget: Budget) -> ToyTarget:
        return ToyTarget(epsilon_of(budget, self.name))

    def compose(
        self, target: Target, shares: Sequence[float], deltas: Sequence[float]
    ) -> Guarantee:
        return basic_composition(shares)


TOY = Toy()


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Accountant:
    """The registry with the toy accountant: its one line, undone after the test."""
    monkeypatch.setitem(registry.ACCOUNTANTS, TOY.name, TOY)
    return TOY


def test_a_new_accountant_is_one_module_and_one_line(
    toy_registered: Accountant, tmp_path: Path
) -> None:
    assert TOY.name in registry.choices() and registry.labels()[TOY.name] == TOY.label
    plan = parse_plan(plan_dict(accounting=TOY.name, delta=None, allocation="optimal"))
    result = allocate(plan)
    assert result.accountant is TOY and result.strategy == "workload"
    assert Fraction(result.total.epsilon) <= 1
    assert result.total.delta is None
    assert {t.noise.mechanism for t in result.tables} == {TOY.mechanism.name}
    share = Share(TOY.name, epsilon=0.5)
    assert share.accountant is TOY and share.split(2).amount == 0.25
    with pytest.raises(PlanError, match=r"budget\.rho is for zcdp accounting only"):
        raw = plan_dict(accounting=TOY.name, epsilon=None, rho=0.01)
        allocate(parse_plan(raw))
    # a release under it, and its report's words for people
    data = tmp_path / "d.csv"
    data.write_text("sex\nFemale\nMale\nMale\n")
    raw = plan_dict(accounting=TOY.name, delta=None)
    raw["tables"] = [{"name": "sex", "by": ["sex"]}]
    plan = parse_plan(raw)
    release = draw_release(plan, count(load_data(data, plan), plan))
    assert release.allocation.accountant is TOY
    assert TOY.description in report_html(release)


def test_the_toy_accountant_is_gone_after_its_test() -> None:
    assert TOY.name not in registry.ACCOUNTANTS
