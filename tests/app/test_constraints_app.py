"""Issue 27 in the dashboard: the Tables page adds and removes a structural zero (a bad one is
one error, the plan kept) and marks a table invariant; the Budget page lists the invariant
tables as exact, outside the guarantee."""

from __future__ import annotations

import copy

from dprelease.ledger.store import Ledger
from dprelease.plan.edit import apply_table_edits
from helpers.app import go, keyed, open_app, workspace
from ui.state import records_key

OLD_AGES = ["[25, 30)", "[30, 35)", "[35, 45)", "[45, 55)", "[55, 65)", "[65, 75)"]


def test_tables_page_adds_and_removes_a_structural_zero():
    app = go(open_app(), "pages/tables.py")
    app.multiselect(key="zero_columns").set_value(["age", "education"]).run()
    app.multiselect(key="zero_values_age").set_value(OLD_AGES)
    app.multiselect(key="zero_values_education").set_value(["Under 25"])
    app.button(key="add_zero").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["structural_zeros"] == [{"age": OLD_AGES, "education": ["Under 25"]}]
    assert any("education in Under 25" in m.value for m in app.markdown)
    app.button(key="remove_zero_0").click().run()
    assert not app.exception
    assert "structural_zeros" not in workspace(app).plan


def test_a_zero_that_empties_a_table_is_one_error_and_the_plan_is_kept():
    app = go(open_app(), "pages/tables.py")
    before = copy.deepcopy(workspace(app).plan)
    app.multiselect(key="zero_columns").set_value(["tenure"]).run()
    app.multiselect(key="zero_values_tenure").set_value(["Owner", "Renter"])
    app.button(key="add_zero").click().run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "every cell of table" in errors[0], errors
    assert "The plan is unchanged" in errors[0]
    assert workspace(app).plan == before


def test_the_grid_marks_a_table_invariant_only_when_ticked():
    plan = {"columns": {"sex": {"domain": ["F", "M"]}}, "tables": [{"name": "s", "by": ["sex"]}]}
    row = {"name": "s", "weight": 1.0, "locked epsilon": None, "remove": False}
    assert "invariant" not in apply_table_edits(plan, [row], "epsilon")["tables"][0]
    ticked = apply_table_edits(plan, [{**row, "invariant (exact, no noise)": True}], "epsilon")
    assert ticked["tables"][0]["invariant"] is True
    cleared = apply_table_edits(ticked, [row], "epsilon")
    assert "invariant" not in cleared["tables"][0]


def test_budget_page_says_which_tables_are_exact():
    app = go(open_app(), "pages/tables.py")
    ws = workspace(app)
    plan = copy.deepcopy(ws.plan)
    for table in plan["tables"]:
        if table["name"] in ("total", "state"):
            table.pop("weight", None)
            table["invariant"] = True
    ws.plan = plan
    grid = next(d.value for d in app.run().dataframe if "cells" in d.value.columns)
    assert "invariant (exact, no noise)" in grid.columns
    go(app, "pages/budget.py")
    assert not app.exception and not app.error, [e.value for e in app.error]
    frame = next(
        d.value
        for d in app.dataframe
        if "mechanism" in d.value.columns and "budget" in d.value.columns
    )
    assert list(frame["table"]) == ["total", "state"]
    assert set(frame["mechanism"]) == {"none (exact)"}
    captions = [c.value for c in app.caption]
    assert any("outside the differential privacy guarantee" in c for c in captions), captions
    assert any("covers the other tables only" in c for c in captions)
    warnings = [w.value for w in app.warning]
    assert any("published exact" in w for w in warnings), warnings


def test_release_page_refuses_rows_in_a_structural_zero_and_charges_nothing(ledger_file):
    """Issue 35: the bundled sample has rows that are female owners; a zero there used to be
    released as 0 (the totals short by those rows) and charged."""
    app = go(open_app(), "pages/tables.py")
    app.multiselect(key="zero_columns").set_value(["sex", "tenure"]).run()
    app.multiselect(key="zero_values_sex").set_value(["Female"])
    app.multiselect(key="zero_values_tenure").set_value(["Owner"])
    app.button(key="add_zero").click().run()
    assert not app.error, [e.value for e in app.error]
    go(app, "pages/release.py")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "structural zero sex in Female and tenure in Owner" in errors[0]
    assert "Nothing was charged" in errors[0] and "16275" not in errors[0].replace(",", "")
    assert workspace(app).release is None
    assert Ledger(ledger_file).entries(records_key(workspace(app))) == []


def test_the_zero_picker_shows_the_declared_labels():
    """Issue 37: the structural-zero pickers and the list of zeros show "label (code)"."""
    app = go(open_app(), "pages/tables.py")
    ws = workspace(app)
    plan = copy.deepcopy(ws.plan)
    plan["columns"]["tenure"]["labels"] = {"Owner": "Owns the home"}
    ws.plan = plan
    app.run()
    app.multiselect(key="zero_columns").set_value(["tenure", "sex"]).run()
    assert "Owns the home (Owner)" in app.multiselect(key="zero_values_tenure").options
    assert "Renter" in app.multiselect(key="zero_values_tenure").options
    app.multiselect(key="zero_values_tenure").set_value(["Owner"])
    app.multiselect(key="zero_values_sex").set_value(["Female"])
    app.button(key="add_zero").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["structural_zeros"] == [{"tenure": ["Owner"], "sex": ["Female"]}]
    assert any("tenure in Owns the home (Owner)" in m.value for m in app.markdown)
