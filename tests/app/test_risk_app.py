"""The Risk page and the ε-as-risk block, driven with Streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def open_page(page: str) -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    app.run()
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def test_risk_page_is_labelled_and_has_nothing_to_download():
    app = open_page("pages/risk.py")
    assert "CONFIDENTIAL" in app.warning[0].value
    assert not app.get("download_button")
    assert not app.dataframe  # static tables only
    labels = [m.label for m in app.metric]
    assert "k (smallest class)" in labels
    assert app.metric[0].value == "1"  # county, age, sex, race: many people are unique
    charts = app.get("plotly_chart")
    assert charts and all('"displayModeBar": false' in c.proto.config for c in charts)


def test_risk_controls_change_the_measures():
    app = open_page("pages/risk.py")
    app.multiselect(key="risk_qi").set_value(["sex"]).run()
    assert not app.exception
    assert app.metric[0].value != "1"  # two classes of thousands
    app.number_input(key="risk_k").set_value(1000).run()
    assert "records in classes < 1000" in [m.label for m in app.metric]
    app.selectbox(key="risk_sensitive").set_value("tenure").run()
    app.number_input(key="risk_c").set_value(3.0).run()
    assert not app.exception
    assert any("Generalisations" in s.value for s in app.subheader)


def test_risk_attack_runs_on_a_click_and_shows_both_sides():
    app = open_page("pages/risk.py")
    app.number_input(key="risk_max_areas").set_value(10).run()
    assert not app.table or len(app.table) < 4  # nothing before the click
    app.button(key="risk_attack").click().run()
    assert not app.exception, app.exception
    result = app.session_state["workspace"].memo.risk_attack
    assert result["areas_tried"] == 10 and result["dp"] is not None
    text = " ".join(str(t.value) for t in app.table)
    assert "preview" in text and "exact tables" in text


def test_budget_page_shows_epsilon_as_risk():
    app = open_page("pages/budget.py")
    labels = [m.label for m in app.metric]
    assert "Odds can change by at most" in labels
    assert any("multiply their odds" in m.value for m in app.markdown)
