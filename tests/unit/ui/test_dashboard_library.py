"""The library parts behind the dashboard: plan edits, trade-off numbers, preview metrics,
domain coverage and the Tables page's grid."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.accounting.composition import zcdp_to_epsilon
from dprelease.accounting.tradeoffs import (
    compare_accountants,
    compare_scenarios,
    epsilon_delta_curve,
    moe_curves,
    typical_cell_advice,
)
from dprelease.data.coverage import domain_coverage
from dprelease.data.domains import domain_from_data
from dprelease.errors import PlanError
from dprelease.plan.codebook_csv import parse_codebook
from dprelease.plan.edit import (
    add_every_k_way,
    add_table,
    apply_table_edits,
    check_column,
    empty_plan,
    ignore_column,
    parse_domain_text,
    parse_edges,
    remove_table,
    set_categorical,
    update_table,
)
from dprelease.plan.parse import parse_plan
from dprelease.release.metrics import error_metrics
from helpers.plans import make_plan, plan_dict


def test_pasted_domains_keep_codes_with_leading_zeros_as_text():
    # one type per domain (issue 24): any text makes every value text
    assert parse_domain_text("01\n2, 10\n\nx ;-3") == ["01", "2", "10", "x", "-3"]
    assert parse_domain_text("1\n2, 10\n\n-3") == [1, 2, 10, -3]
    with pytest.raises(PlanError, match="empty"):
        parse_domain_text(" \n ,")


def test_codebook_gives_values_and_parents():
    values, parents = parse_codebook(b"code,label,parent\n01001,A,01\n02001,B,02\n")
    assert values == ["01001", "02001"] and parents == {"01001": "01", "02001": "02"}
    assert parse_codebook(b"value\n1\n2\n") == ([1, 2], None)
    with pytest.raises(PlanError, match="no parent"):
        parse_codebook(b"value,parent\n1,\n")
    with pytest.raises(PlanError, match="UTF-8"):
        parse_codebook("v\nä\n".encode("utf-16"))


def test_domain_from_data_is_sorted_distinct_and_ignores_missing():
    column = pa.chunked_array([["b", None, "a", "b", "10"]])
    assert domain_from_data(column, "c") == ["10", "a", "b"]  # one type: all text


def test_edges_are_numbers():
    assert parse_edges("0, 18 65;120.5") == [0, 18, 65, 120.5]
    with pytest.raises(PlanError, match="not a number"):
        parse_edges("0, ten")
    with pytest.raises(PlanError, match="two"):
        parse_edges("5")


def test_tables_are_added_once_named_and_removed():
    plan = plan_dict()
    plan["tables"] = []
    plan = add_table(plan, ["age", "sex"])
    assert add_table(plan, ["sex", "age"]) == plan  # same columns: not added twice
    plan = add_every_k_way(plan, ["sex", "race", "age"], 2)
    assert [t["name"] for t in plan["tables"]] == ["age_by_sex", "sex_by_race", "race_by_age"]
    with pytest.raises(PlanError, match="no domain yet"):
        add_table(plan, ["region"])
    with pytest.raises(PlanError, match="already a table"):
        add_table(plan, ["sex"], name="age_by_sex")
    plan = update_table(plan, "age_by_sex", weight=3, name="age_sex")
    assert plan["tables"][0] == {"name": "age_sex", "by": ["age", "sex"], "weight": 3}
    plan = update_table(plan, "age_sex", weight=None)
    assert "weight" not in plan["tables"][0]
    assert len(remove_table(plan, "age_sex")["tables"]) == 2
    parse_plan(plan)  # every edit keeps a valid plan


def test_ignoring_a_column_drops_its_tables_and_children():
    plan = plan_dict()
    plan = ignore_column(plan, "sex")
    assert "sex" not in plan["columns"]
    assert all("sex" not in t["by"] for t in plan["tables"])


def test_check_column_reports_a_bad_declaration_with_its_parents():
    plan = set_categorical(empty_plan(), "state", ["01", "02"])
    plan = set_categorical(
        plan, "county", ["01001", "02001"], parent="state", parent_map={"01001": "01"}
    )
    with pytest.raises(PlanError, match="parent_map misses"):
        check_column(plan, "county")
    check_column(plan, "state")


def test_moe_curve_passes_through_the_current_budget_and_falls_with_epsilon():
    plan = make_plan()
    curve = moe_curves(plan, points=5, span=4.0)
    assert curve.budgets[2] == pytest.approx(1.0)
    current = {t.name: t.moe for t in allocate(plan).tables}
    for name, values in curve.moe.items():
        assert values[2] == pytest.approx(current[name])
        assert list(values) == sorted(values, reverse=True)


def test_accountants_on_laplace_noise_order_as_theory_says():
    allocation = allocate(make_plan(accounting="pure", delta=None))
    bounds = {b.accountant: b.epsilon for b in compare_accountants(allocation, 1e-6)}
    basic = bounds["pure (basic composition)"]
    assert basic == pytest.approx(1.0)
    assert bounds["optimal composition (KOV)"] <= basic
    assert bounds["advanced composition"] > basic  # three tables: advanced does not pay off


def test_accountants_on_gaussian_noise_include_the_exact_composition():
    allocation = allocate(make_plan(accounting="approx", delta=1e-8))
    bounds = {b.accountant: b.epsilon for b in compare_accountants(allocation, 1e-8)}
    assert bounds["pure (basic composition)"] is None
    # approx draws the discrete Gaussian (issue 14): its own PLD is the bound it is certified by
    pld = bounds["discrete Gaussian (PLD)"]
    assert pld <= bounds["zCDP"] <= bounds["approx (basic composition)"]
    assert pld <= allocation.total.epsilon * (1 + 1e-9)


def test_zcdp_epsilon_delta_curve_matches_the_conversion():
    assert epsilon_delta_curve(0.1, [1e-5, 1e-10]) == [
        zcdp_to_epsilon(0.1, 1e-5)[0],
        zcdp_to_epsilon(0.1, 1e-10)[0],
    ]


def test_scenarios_line_up_tables_and_totals():
    low = allocate(make_plan(epsilon=0.5))
    high = allocate(make_plan(epsilon=2.0))
    rows = compare_scenarios({"low": low, "high": high})
    assert rows[0]["table"] == "sex" and rows[0]["low"] > rows[0]["high"]
    assert rows[-1] == {"table": "total ε", "low": low.total.epsilon, "high": high.total.epsilon}


def test_typical_cell_advice_flags_tables_whose_noise_swamps_cells():
    allocation = allocate(make_plan(epsilon=0.01))
    notes = typical_cell_advice(allocation, rows=100)
    assert notes and all("exceeds its average cell" in n for n in notes)
    assert typical_cell_advice(allocate(make_plan(epsilon=10.0)), rows=10**7) == ()


def test_error_metrics():
    metrics = error_metrics(np.array([10, 10, 10, 10]), np.array([11, 7, 10, 10]), moe=2.0)
    assert metrics.mae == 1.0 and metrics.rmse == math.sqrt(10 / 4)
    assert metrics.max_abs == 3.0 and metrics.share_beyond_moe == 0.25


def test_coverage_counts_rows_outside_the_domain():
    plan = set_categorical(empty_plan(), "sex", ["F", "M"])
    table = pa.table({"sex": ["F", "M", "X", None], "other": ["a", "b", "c", "d"]})
    report = domain_coverage(table, plan)["sex"]
    assert report.rows == 4 and report.rows_in_domain == 2 and report.rows_left_out == 2


def test_grid_edits_become_plan_edits():
    plan = plan_dict()
    rows = [
        {
            "name": "sex",
            "weight": 1.0,
            "locked rho": 0.01,
            "target MoE per cell": None,
            "target MoE whole table": float("nan"),
            "remove": False,
        },
        {
            "name": "age_sex",
            "weight": 2.0,
            "locked rho": None,
            "target MoE per cell": 30.0,
            "target MoE whole table": None,
            "remove": False,
        },
        {
            "name": "race",
            "weight": 9.0,
            "locked rho": None,
            "target MoE per cell": None,
            "target MoE whole table": None,
            "remove": True,
        },
    ]
    edited = apply_table_edits(plan, rows, "rho")
    assert edited["tables"] == [
        {"name": "sex", "by": ["sex"], "rho": 0.01},
        {"name": "age_sex", "by": ["age", "sex"], "weight": 2.0, "target": {"moe": 30.0}},
    ]
    rows[0]["target MoE per cell"] = 5.0
    rows[0]["target MoE whole table"] = 9.0
    with pytest.raises(PlanError, match="one accuracy target"):
        apply_table_edits(plan, rows, "rho")
