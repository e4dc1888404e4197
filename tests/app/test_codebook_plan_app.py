"""Planning from codebooks alone (issue 24, point 6): a codebook's labels and parents are
kept, the parent box is back at "(none)" after each column, so the next codebook without a
parent column is added, and a refusal reads as plain text (no raw backticks)."""

from __future__ import annotations

import yaml

from dprelease.plan.yaml_text import plan_yaml
from helpers.app import open_app, submit, workspace
from ui.plan_without_data import plan_with_data_name

STATES = b"STATE,label\n01,Alabama\n06,California\n13,Georgia\n17,Illinois\n"
PUMAS = (
    b"PUMA,label,parent\n00100,Mobile County,01\n00200,Los Angeles,06\n00300,Atlanta,13\n"
    b"00400,Chicago,17\n"
)
SEX = b"SEX,label\n1,Male\n2,Female\n"


def no_data_app():
    app = open_app()
    app.button(key="no_data").click().run()
    return app


def add_codebook(app, name: str, data: bytes, parent: str | None = None):
    app.file_uploader(key="codebook_only").upload(name, data, "text/csv")
    if parent is not None:
        app.selectbox(key="codebook_only_parent").set_value(parent)
    return submit(app, "codebook_column_form")


def test_codebooks_keep_labels_and_parents_and_the_parent_box_resets():
    app = add_codebook(no_data_app(), "state.csv", STATES)
    state = workspace(app).plan["columns"]["STATE"]
    assert state["domain"] == ["01", "06", "13", "17"]  # one type: all text
    assert state["labels"]["13"] == "Georgia"
    assert any("categorical, 4 values, 4 labelled" in e.label for e in app.expander)

    app = add_codebook(app, "puma.csv", PUMAS, parent="STATE")
    puma = workspace(app).plan["columns"]["PUMA"]
    assert puma["parent"] == "STATE" and puma["parent_map"]["00300"] == "13"
    assert puma["labels"]["00400"] == "Chicago"
    assert app.selectbox(key="codebook_only_parent").value == "(none)"  # reset

    app = add_codebook(app, "sex.csv", SEX)  # no parent column: added, not refused
    assert not app.error, [e.value for e in app.error]
    assert workspace(app).plan["columns"]["SEX"] == {
        "kind": "categorical",
        "domain": [1, 2],
        "labels": {"1": "Male", "2": "Female"},
    }
    saved = yaml.safe_load(plan_yaml(plan_with_data_name(workspace(app))))
    assert saved["columns"]["STATE"]["domain"] == ["01", "06", "13", "17"]
    assert saved["columns"]["PUMA"]["labels"]["00100"] == "Mobile County"


def test_a_parent_for_a_codebook_without_parents_is_refused_in_plain_words():
    app = add_codebook(no_data_app(), "state.csv", STATES)
    app = add_codebook(app, "sex.csv", SEX, parent="STATE")
    assert app.error
    message = app.error[0].value
    assert "`" not in message.replace("\\`", "`") and "Nothing was changed" in message
    assert "no parent column" in message
    assert "SEX" not in workspace(app).plan["columns"]
    assert app.selectbox(key="codebook_only_parent").value == "STATE"  # kept: nothing lost


def test_bins_take_one_label_each_and_a_wrong_count_is_one_error():
    from helpers.app import SMALL_CSV, keyed

    app = open_app()
    app.file_uploader(key="data_upload").upload("survey.csv", SMALL_CSV, "text/csv").run()
    keyed(app.selectbox, "kind_age_").set_value("numeric").run()
    keyed(app.text_input, "edges_age_").set_value("0, 18, 65, 120")
    keyed(app.text_area, "bin_labels_age_").set_value("0–17\n18–64")
    submit(app, "num_form_age_")
    assert len(app.error) == 1
    assert "Column 'age' has 3 bins but 2 labels" in app.error[0].value.replace("\\", "")
    assert "age" not in workspace(app).plan["columns"]  # nothing changed
    keyed(app.text_area, "bin_labels_age_").set_value("0–17\n18–64\n65 and over")
    submit(app, "num_form_age_")
    assert not app.error, [e.value for e in app.error]
    assert workspace(app).plan["columns"]["age"]["labels"] == ["0–17", "18–64", "65 and over"]
    assert any("numeric, 3 bins, labelled" in e.label for e in app.expander)
