"""The Data page's labels: a codebook's label column, the labels box, labels kept through a
domain edit, a bad label refused; the Preview chart shows "label (code)" on category axes."""

from __future__ import annotations

import json

from helpers.app import go, keyed, open_app, submit, workspace

CODED_CSV = (
    "STATE,SEX\n" + "".join(f"{['01', '06', 'N'][i % 3]},{1 + i % 2}\n" for i in range(120))
).encode()
CODEBOOK = b"code,label\n01,Alabama\n06,California\n08,Colorado\nN,Not applicable\n"


def coded_app():
    app = open_app()
    app.file_uploader(key="data_upload").upload("coded.csv", CODED_CSV, "text/csv").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    keyed(app.selectbox, "kind_STATE_").set_value("categorical").run()
    keyed(app.file_uploader, "codebook_STATE_").upload("states.csv", CODEBOOK, "text/csv")
    submit(app, "cat_form_STATE_")
    return app


def label_sex(app):
    keyed(app.selectbox, "kind_SEX_").set_value("categorical").run()
    keyed(app.text_area, "domain_SEX_").set_value("1\n2")
    keyed(app.text_area, "labels_SEX_").set_value("1 = Male\n2 = Female")
    submit(app, "cat_form_SEX_")
    return app


def test_a_codebook_with_a_label_column_declares_domain_and_labels():
    app = coded_app()
    column = workspace(app).plan["columns"]["STATE"]
    assert column["domain"] == ["01", "06", "08", "N"]
    assert column["labels"] == {
        "01": "Alabama",
        "06": "California",
        "08": "Colorado",
        "N": "Not applicable",
    }
    assert any("categorical, 4 values, 4 labelled" in e.label for e in app.expander)
    assert keyed(app.text_area, "labels_STATE_").value.startswith("01 = Alabama\n06 = California")


def test_the_labels_box_sets_labels_refuses_bad_ones_and_a_domain_edit_keeps_them():
    app = label_sex(coded_app())
    assert workspace(app).plan["columns"]["SEX"]["labels"] == {"1": "Male", "2": "Female"}

    before = json.dumps(workspace(app).plan, sort_keys=True)
    keyed(app.text_area, "labels_SEX_").set_value("1 = Male\n3 = Other")
    submit(app, "cat_form_SEX_")
    assert app.error and "labels name 1 code(s) not in its domain ('3')" in app.error[0].value
    assert "Nothing was changed" in app.error[0].value
    assert json.dumps(workspace(app).plan, sort_keys=True) == before
    keyed(app.text_area, "labels_SEX_").set_value("1 Male")
    submit(app, "cat_form_SEX_")
    assert "Label line 1 must read" in app.error[0].value

    keyed(app.text_area, "domain_STATE_").set_value("01\n06\nN")  # 08 leaves the domain
    submit(app, "cat_form_STATE_")
    assert not app.error, [e.value for e in app.error]
    labels = workspace(app).plan["columns"]["STATE"]["labels"]
    assert labels == {"01": "Alabama", "06": "California", "N": "Not applicable"}


def test_preview_chart_shows_label_and_code_on_a_category_axis():
    app = label_sex(coded_app())
    go(app, "pages/tables.py")
    app.multiselect(key="new_table_by").set_value(["STATE", "SEX"])
    submit(app, "add_table_form")
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    heat = spec["data"][0]
    assert heat["y"] == ["Alabama (01)", "California (06)", "Colorado (08)", "Not applicable (N)"]
    assert heat["x"] == ["Male (1)", "Female (2)"]
    assert spec["layout"]["xaxis"]["type"] == "category"
    assert spec["layout"]["yaxis"]["type"] == "category"
