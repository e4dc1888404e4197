"""Issue 11, High 1 and Low 12: δ near 1 is refused everywhere, a positive ρ never states
ε ≤ 0, and the two float formulas a budget depends on are pushed up and re-checked."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from dprelease.accounting.composition import epsilon_to_zcdp, zcdp_guarantee, zcdp_to_epsilon
from dprelease.accounting.mechanisms import gaussian_epsilon, gaussian_sigma
from dprelease.accounting.precise import _normal_cdf, cks_epsilon_upper, gaussian_delta_upper
from dprelease.cli import main
from dprelease.errors import BudgetError, PlanError
from dprelease.limits import DELTA_LIMIT
from helpers.plans import make_plan

ISSUE_BUDGETS = [
    {"accounting": "zcdp", "rho": 0.6, "delta": 0.9, "epsilon": None},
    {"accounting": "approx", "epsilon": 0.01, "delta": 0.99},
    {"accounting": "zcdp", "epsilon": 1.0, "delta": 2e-3},
]


@pytest.mark.parametrize("budget", ISSUE_BUDGETS)
def test_a_plan_with_delta_above_the_limit_is_refused(budget):
    with pytest.raises(PlanError, match="the chance the guarantee fails outright") as error:
        make_plan(**budget)
    assert "far below 1/rows" in str(error.value) and "\n" not in str(error.value)


def test_the_limit_itself_is_accepted():
    assert make_plan(accounting="approx", epsilon=1.0, delta=DELTA_LIMIT).budget.delta == 1e-3


def test_a_table_delta_above_the_limit_is_refused():
    tables = [{"name": "sex", "by": ["sex"], "delta": 0.5}]
    with pytest.raises(PlanError, match="fails outright"):
        make_plan(tables=tables, accounting="approx", epsilon=1.0, delta=1e-6)


def test_the_cli_refuses_delta_near_one_in_one_line(tmp_path, capsys):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "columns: {sex: {kind: categorical, domain: [F, M]}}\n"
        "tables: [{name: sex, by: [sex]}]\n"
        "budget: {accounting: zcdp, rho: 0.6, delta: 0.9}\n"
    )
    assert main(["plan", str(plan)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the chance the guarantee fails outright" in err


def test_a_positive_rho_never_converts_to_epsilon_at_most_zero():
    with pytest.raises(BudgetError, match="converts to no positive epsilon"):
        zcdp_to_epsilon(1e-12, 1e-3)
    with pytest.raises(BudgetError, match="converts to no positive epsilon"):
        zcdp_guarantee([1e-13, 1e-13], 1e-3)
    epsilon, _ = zcdp_to_epsilon(1e-6, 1e-10)
    assert epsilon > 0


@settings(max_examples=60, deadline=None)
@given(
    rho=st.floats(1e-9, 30.0),
    delta=st.floats(1e-15, DELTA_LIMIT),
)
def test_any_positive_rho_states_a_positive_epsilon_or_is_refused(rho, delta):
    try:
        epsilon, alpha = zcdp_to_epsilon(rho, delta)
    except BudgetError:
        return
    assert epsilon > 0
    assert Fraction(epsilon) >= cks_epsilon_upper(alpha, rho, delta)


# --- Low 12: the float formulas, checked against the high-precision bound --------------------

# Found by a scan of the old code: the float CKS bound understated ε by 1e-11 (relative) here.
CKS_UNDERSTATED = [(1.3696872335752856e-08, 6.706628654983167e-05), (9.48e-08, 8.5e-05)]


@pytest.mark.parametrize(("rho", "delta"), CKS_UNDERSTATED)
def test_the_cks_epsilon_is_never_below_its_exact_value(rho, delta):
    epsilon, alpha = zcdp_to_epsilon(rho, delta)
    assert Fraction(epsilon) >= cks_epsilon_upper(alpha, rho, delta)


@pytest.mark.parametrize("epsilon", [0.00060833, 0.0004, 0.5, 3.0])
def test_epsilon_to_zcdp_gives_a_rho_whose_exact_bound_fits(epsilon):
    rho, alpha = epsilon_to_zcdp(epsilon, 6.7e-05)
    assert cks_epsilon_upper(alpha, rho, 6.7e-05) <= Fraction(epsilon)


# Found by a scan of the old code: the analytic Gaussian's δ exceeded its share by 1e-10.
GAUSSIAN_OVER = [
    (0.0016660158233944523, 4.1046948025358675e-15),
    (0.0010452889387833164, 2.5415376430687674e-15),
    (0.005296701221280713, 8.125371948451526e-09),
]


@pytest.mark.parametrize(("epsilon", "delta"), GAUSSIAN_OVER)
def test_the_gaussian_sigma_never_spends_more_delta_than_its_share(epsilon, delta):
    sigma = gaussian_sigma(epsilon, delta, 1.0)
    assert gaussian_delta_upper(sigma, epsilon, 1.0) <= Fraction(delta)


@pytest.mark.parametrize(("epsilon", "delta"), GAUSSIAN_OVER)
def test_the_composed_gaussian_epsilon_is_never_optimistic(epsilon, delta):
    sigma = gaussian_sigma(epsilon, delta, 1.0)
    stated = gaussian_epsilon([sigma * 2, sigma * 2, sigma * 2, sigma * 2], delta, 1.0)
    assert gaussian_delta_upper(sigma, stated, 1.0) <= Fraction(delta)


@pytest.mark.parametrize("x", [-37.5, -20.0, -8.0, -3.2, -2.99, -1.0, 0.0, 0.7, 2.5, 6.0])
def test_the_precise_normal_cdf_agrees_with_scipy(x):
    from decimal import Decimal

    assert float(_normal_cdf(Decimal(x))) == pytest.approx(norm.cdf(x), rel=1e-13)


def test_the_precise_cks_bound_agrees_with_the_formula():
    alpha, rho, delta = 7.5, 0.05, 1e-8
    direct = alpha * rho + (
        math.log(1 / delta) + (alpha - 1) * math.log(alpha - 1) - alpha * math.log(alpha)
    ) / (alpha - 1)
    assert float(cks_epsilon_upper(alpha, rho, delta)) == pytest.approx(direct, rel=1e-14)
