"""The dashboard entry point opens on the bundled sample (Streamlit's AppTest, headless)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from dprelease.allocation import allocate
from dprelease.planfile import load_plan

ROOT = Path(__file__).resolve().parent.parent


def test_app_opens_on_the_sample_plan_and_shows_its_budget():
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not app.exception
    assert not app.error
    table = app.dataframe[0].value
    allocation = allocate(load_plan(ROOT / "data" / "census_sample.plan.yaml"))
    assert list(table["table"]) == [t.name for t in allocation.tables]
    assert list(table["cells"]) == [t.cells for t in allocation.tables]
