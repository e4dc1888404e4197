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


def test_risk_attack_with_no_small_area_shows_a_message_and_no_rates():
    """Issue 37: areas larger than the limit are not attacked; when none is small enough the
    page said "0.0% reproduced" for both sides. Now: a message that says what to change, no
    table of rates, and no earlier result left standing beside it."""
    app = open_page("pages/risk.py")
    app.number_input(key="risk_max_areas").set_value(5).run()
    app.button(key="risk_attack").click().run()  # counties: a result
    assert app.session_state["workspace"].memo.risk_attack is not None
    app.selectbox(key="risk_level").set_value("state").run()
    app.number_input(key="risk_max_people").set_value(50).run()
    app.button(key="risk_attack").click().run()
    assert not app.exception, app.exception
    errors = " ".join(e.value for e in app.error)
    assert "Nothing was attacked" in errors and "Largest area (people)" in errors
    assert app.session_state["workspace"].memo.risk_attack is None
    text = " ".join(str(t.value) for t in app.table)
    assert "records reproduced exactly" not in text and "0.0%" not in text


def test_budget_page_shows_epsilon_as_risk():
    app = open_page("pages/budget.py")
    labels = [m.label for m in app.metric]
    assert "Odds can change by at most" in labels
    assert any("multiply their odds" in m.value for m in app.markdown)


def test_risk_inputs_are_kept_across_pages():
    """Issue 24.10: Streamlit forgets the widgets of a page not shown; the Risk page keeps
    its choices in the workspace."""
    app = open_page("pages/risk.py")
    app.multiselect(key="risk_qi").set_value(["sex", "age"]).run()
    app.selectbox(key="risk_sensitive").set_value("tenure").run()
    app.number_input(key="risk_k").set_value(7).run()
    app.number_input(key="risk_l").set_value(3).run()
    app.switch_page("pages/budget.py")
    app.run()
    assert not app.exception, app.exception
    app.switch_page("pages/risk.py")
    app.run()
    assert not app.exception, app.exception
    assert app.multiselect(key="risk_qi").value == ["sex", "age"]
    assert app.selectbox(key="risk_sensitive").value == "tenure"
    assert (app.number_input(key="risk_k").value, app.number_input(key="risk_l").value) == (7, 3)


def test_l_is_chosen_apart_from_k_on_the_page():
    app = open_page("pages/risk.py")
    app.multiselect(key="risk_qi").set_value(["county"]).run()
    app.selectbox(key="risk_sensitive").set_value("tenure").run()  # two values
    app.number_input(key="risk_k").set_value(5).run()
    app.number_input(key="risk_l").set_value(2).run()
    app.number_input(key="risk_c").set_value(3.0).run()
    text = " ".join(m.value for m in app.markdown)
    assert "Recursive (3, 2)-diversity" in text
    assert any("l" in n.label and n.help for n in app.number_input if n.key == "risk_l")


def test_a_categorical_code_column_is_nominal_unless_ordered():
    app = open_page("pages/risk.py")
    app.selectbox(key="risk_sensitive").set_value("household_size").run()  # codes 1..7
    labels = [m.label for m in app.metric]
    assert "t (equal distance)" in labels  # the plan declares it categorical
    keyed = [t for t in app.toggle if str(t.key).startswith("risk_ordered")]
    assert keyed and keyed[0].value is False
    keyed[0].set_value(True).run()
    assert "t (ordered distance)" in [m.label for m in app.metric]
    app.selectbox(key="risk_sensitive").set_value("education").run()
    assert "t (equal distance)" in [m.label for m in app.metric]


def test_suppressed_reads_as_text_and_no_cli_flag_on_the_page():
    app = open_page("pages/risk.py")
    app.multiselect(key="risk_qi").set_value(["county", "age", "sex", "race"]).run()
    app.number_input(key="risk_k").set_value(50).run()
    cells = [str(v) for t in app.table for v in t.value.to_numpy().ravel()]
    suppressed = [c for c in cells if "suppressed" in c]
    assert suppressed and all(not c.startswith("* ") for c in suppressed)
    app.number_input(key="risk_max_areas").set_value(3).run()
    app.button(key="risk_attack").click().run()
    assert not app.exception, app.exception
    shown = " ".join(str(c.value) for c in (*app.caption, *app.markdown))
    assert "areas to try" in shown and "--max-areas" not in shown


def test_the_attack_runs_with_a_statistic_in_the_plan():
    """Issue 24.1: a plan with a statistic crashed the attack ("statistics need the data");
    the attack draws the count tables only, at the budget the whole plan gives them."""
    app = open_page("pages/risk.py")
    ws = app.session_state["workspace"]
    ws.plan["tables"].append(
        {
            "name": "median_income",
            "by": ["sex"],
            "stat": {"quantile": 0.5, "column": "income", "bounds": [0, 500000]},
        }
    )
    app.run()
    app.number_input(key="risk_max_areas").set_value(5).run()
    app.button(key="risk_attack").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    result = ws.memo.risk_attack
    assert result["dp"] is not None and "median_income" not in result["tables"]
