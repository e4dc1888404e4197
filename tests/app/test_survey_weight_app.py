"""Issue 37.8 in the dashboard: the Tables page weights a table by a numeric column (the grid
shows it), refuses a bad bound in one error with the plan kept, and clears it again; the
Budget page prices the weighted table with W times a count table's sensitivity."""

from __future__ import annotations

import copy

from dprelease.data.columns import number_columns
from dprelease.plan.weight_edit import set_survey_weight, weight_text
from helpers.app import go, open_app, submit, workspace


def weighted_table(app, name: str) -> dict:  # type: ignore[no-untyped-def]
    return next(t for t in workspace(app).plan["tables"] if t["name"] == name)


def test_tables_page_sets_shows_and_clears_a_survey_weight():
    app = go(open_app(), "pages/tables.py")
    first = app.selectbox(key="weight_table").options[0]
    choices = app.selectbox(key="weight_column").options
    assert "income" in choices and "age" in choices
    assert "sex" not in choices and "household_size" not in choices  # text; declared categorical
    app.selectbox(key="weight_column").set_value("income")
    app.number_input(key="weight_bound").set_value(8)
    submit(app, "survey_weight_form")
    assert not app.error, [e.value for e in app.error]
    assert weighted_table(app, first)["survey_weight"] == {
        "column": "income",
        "bounds": [0, 8],
    }
    grid = app.get("arrow_data_frame") or []
    shown = [str(frame.value) for frame in grid] if grid else []
    assert not shown or any("income in [0, 8]" in text for text in shown)
    app.selectbox(key="weight_column").set_value("(none: counts)")
    submit(app, "survey_weight_form")
    assert "survey_weight" not in weighted_table(app, first)


def test_a_bad_bound_is_one_error_and_the_plan_is_kept():
    app = go(open_app(), "pages/tables.py")
    before = copy.deepcopy(workspace(app).plan)
    app.selectbox(key="weight_column").set_value("income")
    app.number_input(key="weight_bound").set_value(2**41)
    submit(app, "survey_weight_form")
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "at most 2^40" in errors[0], errors
    assert "The plan is unchanged" in errors[0]
    assert workspace(app).plan == before
    first = before["tables"][0]["name"]
    weighted = set_survey_weight(before, first, "income", 1000.0)
    assert weighted["tables"][0]["survey_weight"] == {"column": "income", "bounds": [0, 1000]}


def test_budget_page_prices_a_weighted_table_w_times():
    app = go(open_app(), "pages/tables.py")
    first = app.selectbox(key="weight_table").options[0]
    app.selectbox(key="weight_column").set_value("income")
    app.number_input(key="weight_bound").set_value(100)
    submit(app, "survey_weight_form")
    go(app, "pages/budget.py")
    assert not app.error, [e.value for e in app.error]
    from ui.state import current_allocation

    _, allocation, problem = current_allocation(workspace(app))
    assert problem is None and allocation is not None
    assert allocation.table(first).sensitivity.l1 == 100
    assert weight_text(weighted_table(app, first)["survey_weight"]) == "income in [0, 100]"


def test_number_columns_are_the_mostly_numeric_ones():
    import pyarrow as pa

    table = pa.table({"w": ["1", "2", "NA", "4"] * 10, "s": ["a", "b", "1", "2"] * 10})
    assert number_columns(table) == []  # 75% numbers: below the 90% share
    table = pa.table({"w": ["1", "2", "3.5", "4"] * 10, "s": ["a", "b", "1", "2"] * 10})
    assert number_columns(table) == ["w"]
