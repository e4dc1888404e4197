"""Issue 28.4 in the dashboard: add a regression and a PCA on the Tables page, see them on
Budget, their coefficient and component tables on Preview, and release them charged once."""

from __future__ import annotations

import io
import zipfile

from dprelease.ledger.store import Ledger
from helpers.app import go, open_app, submit, workspace
from ui.state import records_key

BOUNDS = "age: 0, 100\nincome: 0, 500000"


def _with_models():
    app = go(open_app(), "pages/tables.py")
    app.selectbox(key="new_model_kind").set_value("linear regression")
    app.text_input(key="new_model_y").set_value("income")
    app.text_input(key="new_model_x").set_value("age")
    app.text_area(key="new_model_bounds").set_value(BOUNDS)
    submit(app, "add_model_form")
    assert not app.error, [e.value for e in app.error]
    app.selectbox(key="new_model_kind").set_value("pca")
    app.text_input(key="new_model_pca").set_value("age, income")
    app.number_input(key="new_model_k").set_value(2)
    app.text_area(key="new_model_bounds").set_value(BOUNDS)
    submit(app, "add_model_form")
    assert not app.error, [e.value for e in app.error]
    tables = workspace(app).plan["tables"]
    assert tables[-2]["stat"]["regression"] == {"y": "income", "x": ["age"], "family": "linear"}
    assert tables[-1]["stat"] == {
        "pca": ["age", "income"],
        "k": 2,
        "bounds": {"age": [0, 100], "income": [0, 500000]},
    }
    return app, tables[-2]["name"], tables[-1]["name"]


def test_tables_page_refuses_a_bad_model_in_one_line():
    app = go(open_app(), "pages/tables.py")
    before = workspace(app).plan["tables"]
    app.selectbox(key="new_model_kind").set_value("pca")
    app.text_input(key="new_model_pca").set_value("age, income")
    app.number_input(key="new_model_k").set_value(3)
    app.text_area(key="new_model_bounds").set_value("age: 100, 0\nincome: 0, 1")
    submit(app, "add_model_form")
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "must have lo" in errors[0], errors
    assert workspace(app).plan["tables"] == before


def test_budget_preview_and_release_show_the_model_tables(ledger_file):
    app, regression, pca = _with_models()
    go(app, "pages/budget.py")
    assert not app.exception and not app.error, [e.value for e in app.error]
    frame = next(d.value for d in app.dataframe if "statistic" in d.value.columns)
    assert {regression, pca} <= set(frame["statistic"])

    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    shown = [t.value for t in app.table]
    assert any(list(t.columns) == ["term", "coefficient", "moe"] for t in shown)
    assert any("loading" in t.columns for t in shown)
    assert any("parametric bootstrap" in c.value for c in app.caption)

    go(app, "pages/release.py")
    app.checkbox(key=next(k for k in _keys(app, "confirm_"))).check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    ws = workspace(app)
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        coefficients = archive.read(f"tables/{regression}.csv").decode().splitlines()
        components = archive.read(f"tables/{pca}.csv").decode().splitlines()
    assert coefficients[0] == "term,coefficient,moe" and coefficients[1].startswith("intercept,")
    assert components[0] == "component,column,loading,moe,variance,variance_moe"
    assert len(components) == 1 + 2 * 2
    entries = Ledger(ledger_file).entries(records_key(ws))
    assert len(entries) == 1 and {regression, pca} <= set(entries[0].tables)


def _keys(app, prefix: str) -> list[str]:
    return [w.key for w in app.checkbox if w.key and w.key.startswith(prefix)]
