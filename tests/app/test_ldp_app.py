"""The Local DP page, driven headlessly with AppTest: every control, the answer, the
confidential simulation (labelled, no download), and the scheme comparison."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from dprelease.ldp import plan_ldp

ROOT = Path(__file__).resolve().parents[2]


def open_page() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.run()
    app.switch_page("pages/local_dp.py")
    app.run()
    assert not app.exception, app.exception
    return app


def answer(app: AppTest) -> str:
    return str(app.success[0].value)


def test_page_opens_with_the_planners_answer_and_no_errors():
    app = open_page()
    assert app.title[0].value == "Local DP"
    assert not app.error
    assert answer(app) == plan_ldp(1.0, 10, 10_000).answer()
    assert len(app.get("plotly_chart")) == 2
    assert not app.get("download_button")


def test_epsilon_domain_size_and_n_change_the_answer():
    app = open_page()
    app.number_input(key="ldp_epsilon").set_value(2.0).run()
    app.number_input(key="ldp_domain_size").set_value(100).run()
    app.number_input(key="ldp_n").set_value(70).run()
    assert answer(app) == plan_ldp(2.0, 100, 70).answer()
    app.number_input(key="ldp_epsilon").set_value(1.0).run()
    assert "you need 87× more respondents" in answer(app)
    assert "the margins' ratio squared" in answer(app)  # issue 37: why the two numbers differ


def test_domain_from_a_plan_column_uses_its_public_domain():
    app = open_page()
    app.radio(key="ldp_domain_source").set_value("A column of the plan").run()
    app.selectbox(key="ldp_column").set_value("sex").run()
    assert answer(app) == plan_ldp(1.0, 2, 10_000).answer()  # sex: Female, Male
    assert answer(app).startswith("With GRR")


def test_target_slider_reports_respondents_needed():
    app = open_page()
    app.select_slider(key="ldp_target").set_value(0.05).run()
    assert any("±5.0%" in str(c.value) for c in app.caption)


def test_simulation_is_labelled_confidential_and_drawn_on_click_only():
    app = open_page()
    assert any("CONFIDENTIAL" in str(w.value) for w in app.warning)
    assert "ldp_simulation" not in app.session_state
    app.selectbox(key="ldp_sim_column").set_value("race").run()
    app.selectbox(key="ldp_protocol").set_value("OLH").run()
    assert "ldp_simulation" not in app.session_state
    app.button(key="ldp_simulate").click().run()
    assert not app.exception and not app.error
    result = app.session_state["ldp_simulation"][1]
    assert result.protocol == "OLH" and result.n == 50_000
    assert len(app.get("plotly_chart")) == 3
    assert not app.get("download_button")
    app.run()  # a rerun keeps the same draw
    assert app.session_state["ldp_simulation"][1] is result


def test_several_questions_compare_and_simulate_both_schemes():
    app = open_page()
    app.multiselect(key="ldp_attributes").set_value(["race", "sex", "education"]).run()
    assert any("Sample one attribute per respondent" in str(i.value) for i in app.info)
    app.selectbox(key="ldp_protocol").set_value("GRR").run()
    app.button(key="ldp_simulate_schemes").click().run()
    assert not app.exception and not app.error
    _, names, rmse = app.session_state["ldp_schemes"]
    assert names == ["race", "sex", "education"] and len(rmse["split"]) == 3
    assert any("gave the smaller error" in str(c.value) for c in app.caption)
