"""Issue 37, point 7: the Data page reads a whole data dictionary in one step, shows what it
will set (and what it leaves out), and applies it with one click; a bad file is one error and
the plan is kept."""

from __future__ import annotations

import json

from helpers.app import go, open_app, upload_small_csv, workspace

DICTIONARY = {
    "sex": {"description": "Sex", "values": {"F": "Female", "M": "Male"}},
    "region": {"values": {"north": "North", "south": "South", "east": "East", "west": "West"}},
    "age": {"bins": [0, 18, 65, 120], "bin_labels": ["child", "adult", "senior"]},
    "income": {"description": "not in this file", "values": ["low", "high"]},
}


def _data_page():
    app = upload_small_csv(open_app())
    return go(app, "pages/data.py")


def test_a_dictionary_is_previewed_then_applied_to_every_column_it_names():
    app = _data_page()
    before = dict(workspace(app).plan.get("columns", {}))
    upload = json.dumps(DICTIONARY).encode()
    app.file_uploader(key="dictionary_upload").upload("codebook.json", upload, "application/json")
    app.run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    preview = next(d.value for d in app.dataframe if "sets" in d.value.columns)
    rows = {r["column"]: r for r in preview.to_dict("records")}
    assert rows["region"]["sets"] == "categorical, 4 codes, 4 labelled"
    assert rows["income"]["note"] == "not in the data"
    assert workspace(app).plan.get("columns", {}) == before  # nothing changed yet
    app.button(key="dictionary_apply").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    columns = workspace(app).plan["columns"]
    assert columns["sex"]["labels"] == {"F": "Female", "M": "Male"}
    assert columns["age"]["bins"] == [0, 18, 65, 120] and "income" not in columns
    assert any("categorical, 4 values, 4 labelled" in e.label for e in app.expander)


def test_a_bad_dictionary_is_one_error_and_the_plan_is_kept():
    app = _data_page()
    before = dict(workspace(app).plan.get("columns", {}))
    bad = b'{"sex": {"values": ["F", "F"]}}'
    app.file_uploader(key="dictionary_upload").upload("codebook.json", bad, "application/json")
    app.run()
    assert not app.exception
    assert [e.value for e in app.error] and "a code twice" in app.error[0].value
    assert workspace(app).plan.get("columns", {}) == before
