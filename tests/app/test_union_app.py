"""A union of two tables (pure DP, `strategy.merge`) through the dashboard: named on the Budget
page, counted from the upload, previewed and released with its measurement file."""

from __future__ import annotations

import io
import json
import zipfile

from helpers.app import declare_small_csv, go, keyed, open_app, submit, upload_small_csv, workspace


def test_a_union_measurement_is_explained_previewed_and_released(ledger_file):
    app = declare_small_csv(upload_small_csv(open_app()))
    go(app, "pages/tables.py")
    for by in (["age", "region"], ["sex", "region"]):
        app.multiselect(key="new_table_by").set_value(by)
        submit(app, "add_table_form")
    go(app, "pages/budget.py")
    caption = next(c.value for c in app.caption if "strategy: auto measures" in c.value)
    assert "measures 1 marginal and derives all 2 published tables" in caption
    assert "sex_by_region_by_age is a union of two tables" in caption

    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).preview is not None

    go(app, "pages/release.py")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    with zipfile.ZipFile(io.BytesIO(workspace(app).release.zip_bytes)) as archive:
        names = set(archive.namelist())
        metadata = json.loads(archive.read("metadata.json"))
    assert "measurements/sex_by_region_by_age.csv" in names
    assert [m["by"] for m in metadata["measurements"]] == [["sex", "region", "age"]]
    assert not any(name.startswith("measured.") or "/measured." in name for name in names)
