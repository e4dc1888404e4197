"""The dashboard's plan store (dprelease/ledger/plans.py) and the library's plan coverage: the
parts of issue 13 that run without Streamlit."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from dprelease.data.coverage import GATE_SHARE, plan_coverage
from dprelease.ledger import plans as plan_store
from dprelease.ledger.plans import (
    MAX_AGE,
    NewPlanLimit,
    PlanStore,
    PlanStoreError,
    is_token,
    new_token,
)
from dprelease.plan.parse import parse_plan
from helpers.plans import plan_dict

PLAN = {"version": 1, "columns": {"SEX": {"kind": "categorical", "domain": ["1", "2"]}}}


def test_a_plan_is_kept_under_its_token_only(tmp_path):
    store = PlanStore(tmp_path)
    token, other = new_token(), new_token()
    assert is_token(token) and token != other
    store.save(token, PLAN, data_name="persons.csv", sample=False)
    kept = store.load(token)
    assert kept is not None
    assert (kept.plan, kept.data_name, kept.sample) == (PLAN, "persons.csv", False)
    assert store.load(other) is None
    # the file is named by the token's hash: a listing gives no token away
    assert [p.name for p in tmp_path.iterdir()] != [token + ".json"]
    assert token not in "".join(p.name for p in tmp_path.iterdir())
    store.forget(token)
    assert store.load(token) is None


@pytest.mark.parametrize("token", ["", "short", "../../etc/passwd", "a" * 65, "a b" * 10, None])
def test_anything_but_a_token_finds_nothing_and_writes_nothing(tmp_path, token):
    store = PlanStore(tmp_path)
    assert store.load(token) is None  # type: ignore[arg-type]
    with pytest.raises(PlanStoreError):
        store.save(token, PLAN, data_name=None, sample=False)  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())


def test_plans_expire_and_the_oldest_go_beyond_the_limit(tmp_path, monkeypatch):
    store = PlanStore(tmp_path)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    token = new_token()
    store.save(token, PLAN, data_name=None, sample=False, now=now)
    assert store.load(token, now=now + MAX_AGE - timedelta(seconds=1)) is not None
    assert store.load(token, now=now + MAX_AGE + timedelta(seconds=1)) is None
    assert not any(tmp_path.iterdir())  # deleted when found expired

    monkeypatch.setattr(plan_store, "MAX_PLANS", 3)
    tokens = [new_token() for _ in range(5)]
    start = datetime.now(UTC).timestamp() - 100
    for order, each in enumerate(tokens):
        store.save(each, PLAN, data_name=None, sample=False)
        os.utime(store._path(each), (start + order, start + order))  # saved in this order
    store.save(tokens[-1], PLAN, data_name=None, sample=False)  # prunes
    assert [store.load(t) is not None for t in tokens] == [False, False, True, True, True]


def test_a_plan_over_the_size_limit_is_refused_with_a_way_out(tmp_path, monkeypatch):
    monkeypatch.setattr(plan_store, "MAX_PLAN_BYTES", 100)
    with pytest.raises(PlanStoreError, match="save it as a file"):
        PlanStore(tmp_path).save(new_token(), PLAN, data_name=None, sample=False)


def test_a_damaged_file_is_no_plan(tmp_path):
    store = PlanStore(tmp_path)
    token = new_token()
    store.save(token, PLAN, data_name=None, sample=False)
    store._path(token).write_text("{not json")
    assert store.load(token) is None


def test_the_store_sits_beside_the_ledger_unless_told(tmp_path, monkeypatch):
    monkeypatch.setenv("DPRELEASE_LEDGER", str(tmp_path / "book.sqlite"))
    monkeypatch.delenv("DPRELEASE_PLANS", raising=False)
    assert plan_store.default_store_dir() == tmp_path / "plans"
    monkeypatch.setenv("DPRELEASE_PLANS", str(tmp_path / "elsewhere"))
    assert plan_store.default_store_dir() == tmp_path / "elsewhere"


# --- issue 25.6: the store cannot fill the disk ------------------------------------------------


def test_the_store_keeps_its_total_bytes_under_the_bound_oldest_first(tmp_path, monkeypatch):
    store = PlanStore(tmp_path)
    big = {**PLAN, "note": "x" * 1000}
    monkeypatch.setattr(plan_store, "MAX_STORE_BYTES", 3600)  # three plans of 1,196 bytes
    tokens = [new_token() for _ in range(5)]
    start = datetime.now(UTC).timestamp() - 100
    for order, each in enumerate(tokens):
        store.save(each, big, data_name=None, sample=False)
        os.utime(store._path(each), (start + order, start + order))  # saved in this order
    store.save(tokens[-1], big, data_name=None, sample=False)  # prunes
    assert [store.load(t) is not None for t in tokens] == [False, False, True, True, True]
    assert sum(p.stat().st_size for p in tmp_path.glob("*.json")) <= 3600
    assert plan_store.MAX_STORE_BYTES_DEFAULT == 200_000_000


def test_leftover_temporary_files_are_pruned(tmp_path):
    store = PlanStore(tmp_path)
    store.save(new_token(), PLAN, data_name=None, sample=False)
    old, fresh = tmp_path / "tmpold.tmp", tmp_path / "tmpfresh.tmp"
    old.write_text("x" * 100)
    fresh.write_text("x")  # another save may be writing it right now
    hour_ago = datetime.now(UTC).timestamp() - 3600
    os.utime(old, (hour_ago, hour_ago))
    store.save(new_token(), PLAN, data_name=None, sample=False)
    assert not old.exists() and fresh.exists()


def test_new_plans_per_minute_are_bounded_per_client_and_in_all(tmp_path):
    limit = NewPlanLimit(per_client=2, in_all=3)
    store = PlanStore(tmp_path, limit=limit)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    first, second = new_token(), new_token()
    store.save(first, PLAN, data_name=None, sample=False, client="10.0.0.1", now=now)
    store.save(second, PLAN, data_name=None, sample=False, client="10.0.0.1", now=now)
    with pytest.raises(PlanStoreError, match="Too many new plans"):
        store.save(new_token(), PLAN, data_name=None, sample=False, client="10.0.0.1", now=now)
    for _ in range(3):  # saving a plan again creates nothing: never counted
        store.save(first, PLAN, data_name=None, sample=False, client="10.0.0.1", now=now)
    store.save(new_token(), PLAN, data_name=None, sample=False, client="10.0.0.2", now=now)
    with pytest.raises(PlanStoreError, match="Too many new plans"):  # 3 in all this minute
        store.save(new_token(), PLAN, data_name=None, sample=False, client=None, now=now)
    assert len(list(tmp_path.glob("*.json"))) == 3
    later = now + timedelta(seconds=61)
    store.save(new_token(), PLAN, data_name=None, sample=False, client="10.0.0.1", now=later)


def test_scenarios_are_kept_with_the_plan(tmp_path):
    store = PlanStore(tmp_path)
    token = new_token()
    scenarios = {"low": {**PLAN, "budget": {"epsilon": 0.5}}, "high": PLAN}
    store.save(token, PLAN, data_name=None, sample=False, scenarios=scenarios)
    kept = store.load(token)
    assert kept is not None and kept.scenarios == scenarios
    assert list(kept.scenarios) == ["low", "high"]  # in the order they were saved


def test_plan_coverage_counts_rows_left_out_of_any_table():
    raw = plan_dict()
    raw["columns"] = {
        "sex": {"kind": "categorical", "domain": ["F", "M"]},
        "state": {"kind": "categorical", "domain": ["01", "06"]},
        "age": {"kind": "numeric", "bins": [0, 18, 120]},
        "unused": {"kind": "categorical", "domain": ["x"]},
    }
    raw["tables"] = [{"name": "a", "by": ["sex", "state"]}, {"name": "b", "by": ["age"]}]
    plan = parse_plan(raw)
    table = pa.table(
        {
            "sex": ["F", "M", "X", "F", None, "M", "F", "M"],
            "state": ["01", "1", "06", "6", "01", "06", "01", "06"],  # 1 and 6: re-saved codes
            "age": ["5", "30", "40", "x", "7", "200", "50", "60"],  # x: not a number
            "unused": ["q"] * 8,  # out of its domain, but no table uses it
        }
    )
    figures = plan_coverage(table, plan)
    # row 1: state 1; row 2: sex X; row 3: state 6 and age x; row 4: sex missing
    assert (figures.rows, figures.rows_left_out) == (8, 4)
    assert {c.name: c.rows_left_out for c in figures.columns} == {"sex": 2, "state": 2, "age": 1}
    assert figures.needs_confirmation() and figures.share_left_out == 0.5
    assert "4 of 8 rows (50.0%)" in figures.summary() and "'state': 2" in figures.summary()


def test_plan_coverage_counts_rows_a_statistic_cannot_use():
    """Issue 24.5: a row whose statistic column is missing or not a number (`N`) is left out of
    that statistic, so it counts like a row outside a table's domain; a number outside the
    bounds is clamped (used), counted apart; a statistic's by-column counts like a table's."""
    raw = plan_dict()
    raw["columns"] = {"state": {"kind": "categorical", "domain": ["01", "06"]}}
    raw["tables"] = [  # statistics only: no count table
        {
            "name": "median_income",
            "by": ["state"],
            "stat": {"quantile": 0.5, "column": "income", "bounds": [0, 1000]},
        },
        {"name": "mean_age", "by": [], "stat": {"mean": "age", "bounds": [0, 100]}},
    ]
    plan = parse_plan(raw)
    table = pa.table(
        {
            "state": ["01", "06", "01", "06", "08", "01", "06", "01"],  # row 4: 08, no domain
            "income": ["10", "N", "", "2000", "50", "-3", "N", "7"],  # N, empty: no number
            "age": ["30", "40", "50", "60", "x", "70", "80", "90"],  # x: no number
        }
    )
    figures = plan_coverage(table, plan)
    # rows 1, 2, 6: no income; row 4: state 08 and age x
    assert (figures.rows, figures.rows_left_out) == (8, 4)
    assert {c.name: c.rows_left_out for c in figures.columns} == {"state": 1}
    found = {s.name: (s.column, s.rows_left_out, s.rows_clamped) for s in figures.statistics}
    assert found == {"median_income": ("income", 3, 2), "mean_age": ("age", 1, 0)}
    assert figures.lossy_columns == ("state", "income", "age")
    summary = figures.summary()
    assert "4 of 8 rows (50.0%) are left out of at least one table or statistic" in summary
    assert "'median_income' ('income'): 3" in summary and "'mean_age' ('age'): 1" in summary
    assert (
        "values outside a statistic's bounds, used as the nearest bound: 'median_income'" in summary
    )
    assert figures.needs_confirmation()


def test_the_gate_opens_at_one_percent_exactly():
    raw = plan_dict()
    raw["columns"] = {"sex": {"kind": "categorical", "domain": ["F"]}}
    raw["tables"] = [{"name": "a", "by": ["sex"]}]
    plan = parse_plan(raw)
    assert GATE_SHARE == 0.01
    at_limit = plan_coverage(pa.table({"sex": ["F"] * 99 + ["M"]}), plan)
    assert at_limit.rows_left_out == 1 and not at_limit.needs_confirmation()
    over = plan_coverage(pa.table({"sex": ["F"] * 98 + ["M"] * 2}), plan)
    assert over.needs_confirmation()
