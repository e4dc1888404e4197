"""The Data page takes a Stata upload (issue 36): the uploader accepts the statisticians'
formats, and a column's value labels fill its domain and labels, marked as the file's
declared codebook (`domain_source: value_labels`), never as values found in the data."""

from __future__ import annotations

from pathlib import Path

from dprelease.data import formats
from helpers.app import keyed, open_app, workspace
from helpers.statfiles import write


def test_a_dta_upload_fills_a_columns_domain_and_labels_from_its_value_labels(
    tmp_path: Path,
) -> None:
    app = open_app()
    uploader = app.file_uploader(key="data_upload")
    assert {".dta", ".sav", ".sas7bdat", ".xpt"} <= set(uploader.proto.type)
    assert list(uploader.proto.type) == list(formats.suffixes())  # asked of the registry
    data = write(tmp_path, "dta").read_bytes()
    uploader.upload("survey.dta", data, "application/x-stata").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("declares value labels for 2 columns" in s.value for s in app.success)

    keyed(app.selectbox, "kind_sex_").set_value("categorical").run()
    assert any("Variable label declared in the file: Sex" in c.value for c in app.caption)
    keyed(app.button, "value_labels_sex_").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["columns"]["sex"] == {
        "kind": "categorical",
        "domain": [1, 2],
        "labels": {"1": "Male", "2": "Female"},
        "domain_source": "value_labels",
    }
    assert any("domain from the file's value labels" in e.label for e in app.expander)
