"""Strategy selection, budget rounding, Gaussian composition and the accountant choice."""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.plan.parse import load_plan
from dprelease.plan.table_spec import Sensitivity
from dprelease.strategy.accountant import choose_accountant
from dprelease.strategy.domain import build_domain
from dprelease.strategy.residual import ErrorModel
from dprelease.strategy.select import StrategyAccounting, WorkloadTable, select_strategy
from helpers.strategy import SELECT_COLUMNS, SELECT_SCHEMA

ONE = Sensitivity(l1=1, l2_squared=1)
SCHEMA = SELECT_SCHEMA
COLUMNS = SELECT_COLUMNS


def _independent_delta(epsilon: float, mu: float) -> float:
    """Balle & Wang 2018, Thm 8, for sensitivity/σ = μ: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    phi = NormalDist().cdf
    return phi(mu / 2 - epsilon / mu) - math.exp(epsilon) * phi(-mu / 2 - epsilon / mu)


def _largest_mu(epsilon: float, delta: float) -> float:
    low, high = 1e-6, 100.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _independent_delta(epsilon, mid) <= delta else (low, mid)
    return high


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-10), (0.3, 1e-6), (4.0, 1e-9)])
def test_approx_set_is_one_gaussian_within_its_calibration(epsilon: float, delta: float) -> None:
    tables = [
        WorkloadTable("a", ("county", "sex")),
        WorkloadTable("b", ("age",)),
        WorkloadTable("c", ()),
    ]
    strategy = select_strategy(SCHEMA, tables, ONE, "approx", epsilon, delta)
    mu_squared = sum(Fraction(1) / Fraction(m.noise.scale) ** 2 for m in strategy.measurements)
    mu = math.sqrt(float(mu_squared))
    assert _independent_delta(epsilon, mu) <= delta * (1 + 1e-9)
    assert mu >= _largest_mu(epsilon, delta) * (1 - 1e-6)  # and it spends (almost) all of it


def test_shares_never_overspend() -> None:
    tables = [
        WorkloadTable(f"t{i}", by)
        for i, by in enumerate([("county", "sex"), ("age", "race"), ("state",), ()])
    ]
    pure = select_strategy(SCHEMA, tables, ONE, "pure", 0.7)
    assert sum(
        (Fraction(1) / Fraction(m.noise.scale) for m in pure.measurements), Fraction(0)
    ) <= Fraction(0.7)
    zcdp = select_strategy(SCHEMA, tables, ONE, "zcdp", 0.7, 1e-9)
    assert zcdp.rho is not None
    spent = sum(
        (Fraction(1) / (2 * Fraction(m.noise.scale) ** 2) for m in zcdp.measurements), Fraction(0)
    )
    assert spent <= Fraction(zcdp.rho)


def test_an_implied_table_of_low_weight_gets_no_budget() -> None:
    """sex is implied by age × sex: with little weight it is derived, not measured."""
    tables = [WorkloadTable("age_by_sex", ("age", "sex")), WorkloadTable("sex", ("sex",), 0.01)]
    strategy = select_strategy(SCHEMA, tables, ONE, "pure", 1.0)
    workload = select_strategy(SCHEMA, tables, ONE, "pure", 1.0, kind="workload")
    assert strategy.workload_error <= workload.workload_error * (1 + 1e-9)
    assert [m.by for m in strategy.measurements] == [("sex", "age")]


def _listed_error(tables: list[WorkloadTable], accounting: str) -> float:
    """Measuring the tables as listed with the budget split equally (today's default)."""
    domain = build_domain(SCHEMA, [t.by for t in tables])
    workload = tuple(domain.marginal_of(t.by) for t in tables)
    distinct = tuple(dict.fromkeys(workload))
    model = ErrorModel(domain, workload, distinct)
    k = len(distinct)
    # pure: ε split equally; zcdp: ρ = 0.05 split equally, σ² = 1/(2ρ_i)
    precision = 2 * math.sinh(1.0 / k / 2) ** 2 if accounting == "pure" else 2 * 0.05 / k
    totals = model.table_variances(np.full(k, precision))
    return float(
        sum(
            t.weight * v / domain.marginal_cells(m)
            for t, m, v in zip(tables, workload, totals, strict=True)
        )
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(COLUMNS), max_size=3, unique=True),
            st.sampled_from([1.0, 2.0, 5.0]),
        ),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from(["pure", "zcdp"]),
)
def test_chosen_strategy_never_worse_than_the_listed_workload(raw, accounting) -> None:
    tables = [WorkloadTable(f"t{i}", tuple(by), w) for i, (by, w) in enumerate(raw)]
    if accounting == "pure":
        chosen = select_strategy(SCHEMA, tables, ONE, "pure", 1.0)
        listed = select_strategy(SCHEMA, tables, ONE, "pure", 1.0, kind="workload")
    else:
        from dprelease.accounting.composition import zcdp_to_epsilon

        epsilon = zcdp_to_epsilon(0.05, 1e-9)[0]
        chosen = select_strategy(SCHEMA, tables, ONE, "zcdp", epsilon, 1e-9)
        listed = select_strategy(SCHEMA, tables, ONE, "zcdp", epsilon, 1e-9, kind="workload")
    assert chosen.workload_error <= listed.workload_error * (1 + 1e-6)
    assert chosen.workload_error <= _listed_error(tables, accounting) * (1 + 1e-3)


def test_accountant_choice_on_the_bundled_sample() -> None:
    plan = load_plan("data/census_sample.plan.yaml")
    tables = [WorkloadTable(t.name, t.by, t.weight) for t in plan.tables]
    choice = choose_accountant(plan.schema, tables, ONE, 1.0, 1e-10)
    assert choice.winner == "pure"  # at ε = 1 with 16 tables discrete Laplace wins
    assert choice.ratio("zcdp") > 1 and choice.ratio("approx") > 1
    assert choice.ratio("approx") < choice.ratio("zcdp")  # exact Gaussian composition beats CKS
    assert "pure" in choice.summary()
    assert choose_accountant(plan.schema, tables, ONE, 1.0, None).winner == "pure"


@pytest.mark.parametrize("accounting", ["zcdp", "approx"])
def test_no_measurement_that_buys_next_to_nothing(accounting: StrategyAccounting) -> None:
    """The multiplicative updates shrink a useless candidate only slowly; before pruning, the
    sample's household_size was measured at σ 1850 beside σ ≈ 23 for the rest."""
    plan = load_plan("data/census_sample.plan.yaml")
    tables = [WorkloadTable(t.name, t.by, t.weight) for t in plan.tables]
    chosen = select_strategy(plan.schema, tables, ONE, accounting, 1.0, 1e-10)
    stds = [m.noise.std for m in chosen.measurements]
    assert max(stds) < 3 * min(stds)
    listed = select_strategy(plan.schema, tables, ONE, accounting, 1.0, 1e-10, "workload")
    assert chosen.workload_error <= listed.workload_error
