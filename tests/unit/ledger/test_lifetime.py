"""Lifetime composition (issue 34, point 3): releases compose tighter than a sum of ε, under a
privacy filter (dprelease.ledger.lifetime)."""

from __future__ import annotations

import json
import math

import pytest

from dprelease.accounting.composition import (
    Guarantee,
    epsilon_to_zcdp,
    zcdp_guarantee,
    zcdp_to_epsilon,
)
from dprelease.errors import BudgetError
from dprelease.ledger.command import ledger_json
from dprelease.ledger.lifetime import (
    BASIC,
    PURE_SUM,
    RENYI,
    Curve,
    admits,
    composed,
    filter_order,
    renyi_cost,
)
from dprelease.ledger.store import Ledger

KEY = "a" * 64


def yearly() -> Guarantee:
    """One yearly release at (1, 1e-10), certified through zCDP as the zcdp accountant does."""
    rho, alpha = epsilon_to_zcdp(1.0, 1e-10)
    return zcdp_guarantee([rho], 1e-10, alpha)


def charge(ledger: Ledger, release_id: str, guarantee: Guarantee) -> None:
    with ledger.charge(KEY, release_id, guarantee, label="year", tables=["t"]):
        pass


def test_ten_yearly_zcdp_releases_fit_a_cap_of_four_and_the_eleventh_waits_for_the_total(
    ledger_at,
):
    # Summing ε charged ten yearly (1, 1e-10) releases ε = 10: a cap of 4 refused the fifth.
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 4.0, 1e-9)
    year = yearly()
    assert year.epsilon <= 1.0 and year.rho is not None
    for n in range(10):
        charge(ledger, f"y{n}", year)
    balance = ledger.balance(KEY)
    assert balance.spent_epsilon == 10.0  # the plain sum, kept for the record
    assert balance.composed.rule == RENYI and balance.composed.epsilon <= 4.0
    assert balance.composed.delta <= 1e-9
    # Go on until the ledger refuses: each admitted set composes within the cap, and the
    # refused one is the first whose composed total would pass it.
    n = 10
    while True:
        curves = [*ledger.balance(KEY).curves, ledger.balance(KEY).curves[0]]
        would = composed(curves, 4.0, 1e-9)
        try:
            charge(ledger, f"y{n}", year)
        except BudgetError as refused:
            assert would.epsilon > 4.0 and "composes to ε" in str(refused)
            break
        assert would.epsilon <= 4.0
        n += 1
        assert n < 100
    assert n >= 11
    assert ledger.balance(KEY).releases == n  # the refused one charged nothing


def test_the_filter_total_is_never_below_the_best_conversion_of_the_summed_rho():
    year = yearly()
    assert year.rho is not None
    curve = Curve("rho", year.epsilon, 1e-10, year.rho)
    for n, cap in ((10, 4.0), (30, 7.0), (100, 13.0)):
        total = composed([curve] * n, cap, 1e-9)
        best, _ = zcdp_to_epsilon(n * year.rho, 1e-10)  # the tightest at the filter's δ
        assert total.rule == RENYI and total.epsilon >= best
        # the order is fixed by the cap, not by the total: near the cap it loses about 2%
        assert total.epsilon <= best * 1.03


def test_pure_releases_still_sum_exactly_under_a_pure_cap():
    tenth = Curve("epsilon", 0.1, 0.0)
    assert composed([tenth] * 9, 1.0, 0.0).rule == PURE_SUM
    assert admits([tenth] * 10, 1.0, 0.0)  # ten decimal tenths are 1 (issue 37.4)
    assert not admits([tenth] * 11, 1.0, 0.0)


def test_many_small_pure_releases_use_the_renyi_filter_when_the_cap_allows_delta():
    small = Curve("epsilon", 0.01, 0.0)
    assert not admits([small] * 200, 1.0, 0.0)  # Σ ε = 2 over a pure cap
    assert admits([small] * 200, 1.0, 1e-3)  # ρ = 0.01 converts to about 0.97 at δ = 1e-10
    assert composed([small] * 200, 1.0, 1e-3).rule == RENYI


def test_an_account_with_an_approx_release_uses_the_basic_filter_with_the_rest_of_delta():
    approx = Curve("epsilon_delta", 0.5, 4e-4)
    assert admits([approx, approx], 2.0, 1e-3)
    assert not admits([approx, approx], 2.0, 8e-4)  # 8e-4 > 8e-4 − 1e-10, the Rényi part
    total = composed([approx], 2.0, 1e-3)
    assert (total.epsilon, total.delta, total.rule) == (0.5, 4e-4, BASIC)


def test_renyi_costs_of_pure_releases_are_the_smaller_bound():
    alpha = filter_order(4.0, 1e-9)
    assert alpha is not None and alpha > 1
    assert renyi_cost(Curve("epsilon", 10.0, 0.0), alpha) == 10  # ε bounds every order
    assert float(renyi_cost(Curve("epsilon", 0.01, 0.0), alpha)) == pytest.approx(alpha * 5e-5)


def test_ledger_show_json_has_the_plain_sums_and_the_composed_total(ledger_at):
    ledger = Ledger(ledger_at)
    ledger.set_cap(KEY, 4.0, 1e-9)
    for n in range(10):
        charge(ledger, f"y{n}", yearly())
    shown = json.loads(json.dumps(ledger_json(ledger)))
    data = shown["datasets"][0]
    assert data["spent"] == {"epsilon": 10.0, "delta": pytest.approx(1e-9)}
    composed_total = data["composed"]
    assert composed_total["rule"] == RENYI
    assert 3.0 < composed_total["epsilon"] <= 4.0 and composed_total["delta"] == 1e-10
    assert math.isclose(data["left"]["epsilon"], 4.0 - composed_total["epsilon"], abs_tol=1e-12)
