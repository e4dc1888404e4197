"""The Data page's privacy-unit widgets follow the plan (issue 24): a loaded plan's unit is
shown and kept, whichever unit the widgets showed before; the user's choice goes into the plan."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dprelease.plan.yaml_text import plan_yaml
from helpers.app import go, open_app, upload_small_csv, workspace

BY_ID = "each person / household (an id column)"


def load_plan(app: AppTest, unit: dict, name: str) -> AppTest:
    plan = {
        "version": 1,
        "unit": unit,
        "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
        "tables": [{"name": "sex", "by": ["sex"]}],
        "budget": {"epsilon": 1.0},
    }
    text = plan_yaml(plan).encode()
    app.file_uploader(key="plan_upload").upload(name, text, "text/yaml").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def test_the_unit_widgets_follow_each_loaded_plan() -> None:
    app = upload_small_csv(open_app())
    app.radio(key="unit_kind").set_value(BY_ID).run()
    app.selectbox(key="unit_column").set_value("region").run()
    assert workspace(app).plan["unit"] == {"kind": "id", "column": "region", "max_rows": 1}

    load_plan(app, {"kind": "row"}, "rows.yaml")  # the widgets showed an id unit
    assert workspace(app).plan["unit"] == {"kind": "row"}
    assert app.radio(key="unit_kind").value == "each row"

    by_age = {"kind": "id", "column": "age", "max_rows": 3}
    load_plan(app, by_age, "ids.yaml")  # the widgets showed rows
    assert app.radio(key="unit_kind").value == BY_ID
    assert app.selectbox(key="unit_column").value == "age"
    assert app.number_input(key="unit_max_rows").value == 3
    go(app, "pages/tables.py")
    assert workspace(app).plan["unit"] == by_age


def test_a_plan_whose_id_column_the_data_lack_keeps_it() -> None:
    app = upload_small_csv(open_app())
    load_plan(app, {"kind": "id", "column": "SERIALNO", "max_rows": 2}, "ids.yaml")
    assert app.selectbox(key="unit_column").value == "SERIALNO"  # not swapped for 'sex'
    assert workspace(app).plan["unit"]["column"] == "SERIALNO"
