"""Issue 25.4: every page, with hostile column names, codebook labels, record values and file
names, renders none of them as an image, a link or HTML (the Risk page showed four planted
images). The browser side is tests/browser/test_hostile_names.py."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from helpers.app import ROOT, budget_tab, go, keyed, open_app
from helpers.hostile import FILE_NAME, HOST, PLAN_NAME, hostile_csv, hostile_plan
from helpers.rendered import assert_no_live_markdown
from ui.budget_tabs import TABS


def hostile_app() -> AppTest:
    app = open_app()
    app.file_uploader(key="data_upload").upload(FILE_NAME, hostile_csv(), "text/csv").run()
    assert not app.exception, app.exception
    app.file_uploader(key="plan_upload").upload(PLAN_NAME, hostile_plan(), "text/yaml").run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    return app


def check(app: AppTest, where: str) -> int:
    assert not app.exception, (where, app.exception)
    return assert_no_live_markdown(app, HOST)


def test_no_page_renders_a_hostile_name_label_value_or_file_name():
    app = hostile_app()
    seen = check(app, "data")
    go(app, "pages/tables.py")
    seen += check(app, "tables")
    go(app, "pages/budget.py")
    for tab in TABS:
        budget_tab(app, tab)
        seen += check(app, tab)
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    seen += check(app, "preview")
    go(app, "pages/release.py")
    seen += check(app, "release")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.error, [e.value for e in app.error]
    seen += check(app, "release made")
    go(app, "pages/local_dp.py")
    app.radio(key="ldp_domain_source").set_value("A column of the plan").run()
    app.multiselect(key="ldp_attributes").set_value(
        list(app.multiselect(key="ldp_attributes").options)[:2]
    ).run()
    app.button(key="ldp_simulate").click().run()
    app.button(key="ldp_simulate_schemes").click().run()
    seen += check(app, "local dp")
    go(app, "pages/risk.py")
    seen += check(app, "risk")
    assert seen >= 10  # the names, labels and values are shown (escaped), not left out


SOURCES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"])
SINK = r"\.(error|warning|info|success|caption|markdown|write|subheader|header|title|toast)\("


def test_every_static_table_and_error_goes_through_the_escaping_helpers():
    """The one place: `ui.markdown.static_table` draws every static table (escaped), and no
    page shows an error's text without `md_error` (errors quote names and values)."""
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if path.name != "markdown.py":
            assert "st.table(" not in text, path
        assert not re.search(SINK + r"\s*str\(error\)", text), path
        assert not re.search(SINK + r"\s*f\"\{error\}", text), path
