"""Issue 27 in the dashboard: the synthetic switch on the Preview and Release pages writes
`postprocess.synthetic` into the plan; the preview and the release then carry the microdata;
a plan the model cannot serve is one st.error, with the plan kept."""

from __future__ import annotations

import io
import json
import zipfile

from helpers.app import (
    declare_small_csv,
    go,
    keyed,
    open_app,
    submit,
    upload_small_csv,
    workspace,
)


def small_app_with_tables():
    app = declare_small_csv(upload_small_csv(open_app()))
    go(app, "pages/tables.py")
    app.multiselect(key="quick_columns").set_value(["sex", "region", "age"])
    submit(app, "quick_add_form")
    app.multiselect(key="new_table_by").set_value(["age", "sex"])
    submit(app, "add_table_form")
    return app


def test_the_switch_adds_microdata_to_the_preview_and_the_release(ledger_file):
    app = small_app_with_tables()
    go(app, "pages/preview.py")
    app.toggle(key="pp_synthetic").set_value(True).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["postprocess"]["synthetic"] is True
    app.button(key="draw_preview").click().run()
    preview = workspace(app).preview
    assert preview is not None and preview.microdata is not None
    assert "synthetic" in preview.steps_applied
    assert any("synthetic persons" in c.value for c in app.caption)

    go(app, "pages/release.py")
    assert app.toggle(key="release_synthetic").value is True
    assert any("Synthetic microdata on" in c.value for c in app.caption)
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    release = workspace(app).release
    with zipfile.ZipFile(io.BytesIO(release.zip_bytes)) as archive:
        people = archive.read("microdata.csv").decode().splitlines()
        metadata = json.loads(archive.read("metadata.json"))
    assert len(people) - 1 == metadata["synthetic"]["rows"]

    app.toggle(key="release_synthetic").set_value(False).run()  # and off again, from here
    assert not workspace(app).plan["postprocess"]["synthetic"]


def test_a_model_too_large_is_one_error_and_the_plan_is_kept():
    """Three 300-value columns in a cycle need a 27-million-cell clique: the Preview says so
    in one error, before anything is drawn, and keeps the plan. (Since the dashboard's own
    allocation is admitted, the tables' consistency, which the microdata need, is refused
    first, from the same plan: either refusal names its limit.)"""
    app = small_app_with_tables()
    ws = workspace(app)
    plan = dict(ws.plan)
    plan["columns"] = {
        **plan["columns"],
        **{c: {"kind": "categorical", "domain": [str(i) for i in range(300)]} for c in "xyz"},
    }
    plan["tables"] = [
        *plan["tables"],
        *({"name": a + b, "by": [a, b]} for a, b in (("x", "y"), ("y", "z"), ("z", "x"))),
    ]
    plan["postprocess"] = {**plan["postprocess"], "synthetic": True}
    ws.plan = plan
    go(app, "pages/preview.py")
    assert len(app.error) == 1, [e.value for e in app.error]
    assert any(limit in app.error[0].value for limit in ("above the limit", "WORK\\_NS"))
    assert workspace(app).plan["tables"] == plan["tables"]
    assert app.toggle(key="pp_synthetic").value is True


def test_the_switch_gives_the_synthesis_its_own_share_and_keeps_it(ledger_file):
    """Issue 38.6 in the dashboard: a share above 0 writes `{budget_share: S}`; the toggle
    shown again keeps it (it wrote `true` back, dropping the share); 0 means no extra budget."""
    app = small_app_with_tables()
    go(app, "pages/preview.py")
    app.toggle(key="pp_synthetic").set_value(True).run()
    app.number_input(key="pp_synthetic_share").set_value(0.2).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["postprocess"]["synthetic"] == {"budget_share": 0.2}
    go(app, "pages/release.py")
    assert app.number_input(key="release_synthetic_share").value == 0.2
    assert workspace(app).plan["postprocess"]["synthetic"] == {"budget_share": 0.2}
    app.number_input(key="release_synthetic_share").set_value(0.0).run()
    assert workspace(app).plan["postprocess"]["synthetic"] is True
