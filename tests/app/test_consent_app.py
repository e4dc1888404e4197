"""Issue 37.4: the release confirmation is given for one release: these data, this plan (its
cost), this attempt. A box ticked for one of them stays ticked for none of the others."""

from __future__ import annotations

from helpers import ROOT
from helpers.app import go, keyed, open_app, workspace
from ui.state import sample_plan_dict


def confirmation(app):  # type: ignore[no-untyped-def]
    return keyed(app.checkbox, "confirm_")


def ticked_release_page():  # type: ignore[no-untyped-def]
    app = go(open_app(), "pages/release.py")
    confirmation(app).check().run()
    assert confirmation(app).value is True
    assert not app.button(key="create_release").disabled
    return app


def test_a_plan_changed_on_the_release_page_asks_again():
    """Before: ticked for 'ε = 1', the box stayed ticked when the plan changed under it."""
    app = ticked_release_page()
    app.text_input(key="dataset_name").set_value("census sample").run()  # the plan changes
    assert not app.exception, app.exception
    assert workspace(app).plan["dataset"] == "census sample"
    assert confirmation(app).value is False
    assert app.button(key="create_release").disabled


def test_a_changed_budget_asks_again():
    app = ticked_release_page()
    ws = workspace(app)
    ws.plan["budget"]["epsilon"] = 0.5  # as the Budget page (or another tab) writes it
    app.run()
    assert "ε = 0.5" in confirmation(app).label
    assert confirmation(app).value is False


def test_new_data_ask_again():
    app = ticked_release_page()
    go(app, "pages/data.py")
    data = (ROOT / "data" / "census_sample.csv").read_bytes()
    app.file_uploader(key="data_upload").upload("census_copy.csv", data, "text/csv")
    app.run()
    assert not app.exception, app.exception
    ws = workspace(app)
    assert ws.upload.name == "census_copy.csv"
    ws.plan = sample_plan_dict()  # the same plan, loaded again for the new file
    go(app, "pages/release.py")
    assert confirmation(app).value is False
    assert app.button(key="create_release").disabled


def test_the_next_release_asks_again(ledger_file):
    app = ticked_release_page()
    app.button(key="create_release").click().run()
    assert not app.exception and workspace(app).release is not None
    app.button(key="new_release").click().run()
    app.button(key="new_release_yes").click().run()
    assert workspace(app).release is None
    assert confirmation(app).value is False
    assert app.button(key="create_release").disabled
