"""Issue 36.1: a Rényi-DP accountant, added as one module and one registry line
(`accounting/accountants/renyi.py`), compared with the others in `plan --json` and on the
Budget page. Its bound is checked against dp-accounting's own RDP conversion."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from dprelease.accounting.accountants.registry import ACCOUNTANTS, choices
from dprelease.accounting.accountants.renyi import ORDERS, renyi_epsilon
from dprelease.accounting.tradeoffs import compare_accountants
from dprelease.plan.parse import parse_plan
from dprelease.stats.allocation import allocate
from helpers.cli import ROOT, run


def _plan(accounting: str, quantiles: int) -> Any:
    tables: list[dict[str, Any]] = [{"name": "by_sex", "by": ["sex"]}]
    tables += [
        {
            "name": f"median_age_{i}",
            "by": ["sex"],
            "stat": {"quantile": [0.5], "column": "age", "bounds": [0, 100]},
        }
        for i in range(quantiles)
    ]
    return parse_plan(
        {
            "version": 1,
            "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
            "tables": tables,
            "budget": {"accounting": accounting, "epsilon": 1.0, "delta": 1e-10},
        }
    )


def test_renyi_is_one_registry_line_and_a_plan_may_name_it():
    assert "renyi" in ACCOUNTANTS and "renyi" in choices()
    assert allocate(_plan("renyi", 0)).total.composition == "renyi"


@pytest.mark.parametrize(
    ("curves", "delta"),
    [
        ([(None, Fraction(1, 100))] * 3, 1e-10),  # Gaussians only
        ([(Fraction(1, 5), Fraction(1, 200))] * 4 + [(None, Fraction(1, 50))], 1e-8),
        ([(Fraction(1, 2), Fraction(1, 8))] * 10, 1e-6),  # pure ε-DP only
    ],
)
def test_the_bound_agrees_with_dp_accountings_rdp_conversion(curves, delta):
    """The same curves (min(ε, αρ) per measurement) on the same orders, converted by
    dp-accounting: ours is that value rounded up (never below it, within 1e-9)."""
    rdp = [
        float(sum(r * Fraction(a) if e is None else min(e, r * Fraction(a)) for e, r in curves))
        for a in ORDERS
    ]
    theirs, _ = rdp_privacy_accountant.compute_epsilon(ORDERS, rdp, delta)
    ours = renyi_epsilon(curves, delta)
    assert ours is not None and theirs <= ours <= theirs * (1 + 1e-9) + 1e-12


def test_what_the_grid_saves_is_spent_as_less_noise():
    """Gaussian tables only: the same shares and ε as zCDP. With two exponential-mechanism
    medians (ε-DP, whose zCDP cost αε²/8 exceeds ε at the orders δ = 1e-10 asks for) the grid
    states less than the plan's ε for zCDP's shares, so the allocator grows every share
    (issue 36.1): more ρ for the tables and the medians, hence less noise, and the release's
    exact guarantee still within ε = 1, close to it."""
    alone = {name: allocate(_plan(name, 0)) for name in ("zcdp", "renyi")}
    assert alone["renyi"].total.epsilon == alone["zcdp"].total.epsilon
    assert alone["renyi"].total.rho == alone["zcdp"].total.rho
    both = {name: allocate(_plan(name, 2)) for name in ("zcdp", "renyi")}
    z, r = both["zcdp"], both["renyi"]
    for grown, base in zip(r.statistics, z.statistics, strict=True):
        assert (grown.cost.rho or 0) > 1.05 * (base.cost.rho or 0)
        assert (grown.cost.epsilon or 0) > (base.cost.epsilon or 0)
    assert r.measurements[0].noise.scale < z.measurements[0].noise.scale
    assert 0.99 <= r.total.epsilon <= 1.0 and r.total.delta == z.total.delta
    assert (r.total.rho or 0) > (z.total.rho or 0)


def test_the_grid_spends_nothing_when_the_budget_is_a_rho():
    """A budget given as ρ is a cap in ρ: nothing is grown past it."""
    plan = _plan("renyi", 2)
    as_rho = replace(plan, budget=replace(plan.budget, epsilon=None, rho=0.05))
    allocation = allocate(as_rho)
    assert Fraction(allocation.total.rho or 0) <= Fraction(0.05)


def test_plan_json_and_the_budget_page_compare_it():
    result = run("plan", str(ROOT / "data" / "census_sample.plan.yaml"), "--json")
    assert result.returncode == 0, result.stderr
    choice = json.loads(result.stdout)["accountant_choice"]
    assert "renyi" in choice["expected_mse"]  # PLAN_AND_CLI.md section 6
    bounds = compare_accountants(allocate(_plan("zcdp", 0)), 1e-10)
    row = next(b for b in bounds if b.accountant.startswith("Rényi"))
    zcdp = next(b for b in bounds if b.accountant == "zCDP")
    assert row.epsilon is not None and zcdp.epsilon is not None
    assert zcdp.epsilon <= row.epsilon <= 1.01 * zcdp.epsilon  # the grid against the optimum


def test_a_release_under_renyi_is_charged_and_labelled(tmp_path):
    plan = (ROOT / "data" / "census_sample.plan.yaml").read_text("utf-8")
    plan = plan.replace("  epsilon: 1.0\n", "  epsilon: 1.0\n  accounting: renyi\n", 1)
    path = tmp_path / "p.yaml"
    path.write_text(
        plan.replace("data: census_sample.csv", f"data: {ROOT / 'data' / 'census_sample.csv'}")
    )
    ledger = str(tmp_path / "l.sqlite")
    result = run("release", str(path), "--ledger", ledger, "--out", str(tmp_path / "r"))
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "r" / "metadata.json").read_text("utf-8"))
    assert meta["accounting"] == "renyi" and meta["total"]["composition"] == "renyi"
    shown = json.loads(run("ledger", "show", "--ledger", ledger, "--json").stdout)
    assert shown["datasets"][0]["releases"][0]["accounting"] == "renyi"
