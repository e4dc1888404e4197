"""Helpers shared by the tests (moved from test_app.py)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


SMALL_CSV = (
    "sex,age,region\n"
    + "".join(
        f"{'F' if i % 3 else 'M'},{(i * 7) % 90},{['north', 'south', 'east'][i % 3]}\n"
        for i in range(300)
    )
).encode()


def open_app() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.run()
    assert not app.exception
    return app


def go(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def budget_tab(app: AppTest, title: str) -> AppTest:
    """Open a tab of the Budget page (they run lazily: only the open tab is drawn)."""
    app.session_state["budget_tab"] = title
    app.run()
    assert not app.exception, app.exception
    return app


def workspace(app: AppTest):
    return app.session_state["workspace"]


def keyed(widgets, prefix: str):
    """The widget whose key starts with `prefix` (keys carry a version suffix)."""
    return next(w for w in widgets if str(w.key).startswith(prefix))


def submit(app: AppTest, form_prefix: str) -> AppTest:
    keyed(app.button, f"FormSubmitter:{form_prefix}").click().run()
    assert not app.exception, app.exception
    return app


def upload_small_csv(app: AppTest) -> AppTest:
    app.file_uploader(key="data_upload").upload("survey.csv", SMALL_CSV, "text/csv")
    app.run()
    assert not app.exception
    assert not app.error, [e.value for e in app.error]
    return app


def declare_small_csv(app: AppTest) -> AppTest:
    keyed(app.selectbox, "kind_sex_").set_value("categorical").run()
    keyed(app.text_area, "domain_sex_").set_value("F\nM")
    submit(app, "cat_form_sex_")
    keyed(app.selectbox, "kind_region_").set_value("categorical").run()
    keyed(app.text_area, "domain_region_").set_value("north, south, east, west")
    submit(app, "cat_form_region_")
    keyed(app.selectbox, "kind_age_").set_value("numeric").run()
    keyed(app.text_input, "edges_age_").set_value("0, 18, 65, 120")
    submit(app, "num_form_age_")
    return app


def release_downloads(app: AppTest) -> list:
    """The Release page's download buttons of releases (not the notebook of the plan's code)."""
    return [b for b in app.get("download_button") if "download_notebook" not in b.proto.id]
