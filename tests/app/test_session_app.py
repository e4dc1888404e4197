"""Issue 13, the session: a plan kept and offered back, plans without data, the coverage gate,
the releases of a session, one way to refuse. Streamlit's AppTest drives the real app."""

from __future__ import annotations

import io
import zipfile

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from dprelease.ledger.plans import PlanStore
from dprelease.limits import EPSILON_LIMIT, RHO_LIMIT
from dprelease.plan.yaml_text import plan_yaml
from helpers.app import (
    ROOT,
    SMALL_CSV,
    budget_tab,
    declare_small_csv,
    go,
    keyed,
    open_app,
    release_downloads,
    submit,
    upload_small_csv,
    workspace,
)
from ui import session
from ui.plan_without_data import plan_with_data_name
from ui.state import NO_DATA

# 300 rows; region 'west ' (a trailing space) and '' fall outside the declared domain
GAPPY_CSV = (
    "sex,age,region\n"
    + "".join(
        f"{'F' if i % 3 else 'M'},{(i * 7) % 90},{['north', 'south', 'west ', ''][i % 4]}\n"
        for i in range(300)
    )
).encode()


@pytest.fixture(autouse=True)
def run_app_py_every_time(app_py_every_run: None) -> None:
    """These tests are about app.py's part (sidebar, session): it runs on every AppTest run."""


BROWSER_COOKIE: dict[str, str | None] = {"token": None}


@pytest.fixture(autouse=True)
def browser_cookie(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan cookie a session's browser sends (AppTest sends no cookies): none unless
    `reopen` gives one. The real cookie is driven in tests/browser/test_journey_resume.py."""
    BROWSER_COOKIE["token"] = None
    monkeypatch.setattr(session, "_cookie", lambda: BROWSER_COOKIE["token"])


def reopen(token: str | None, link: str | None = None, page: str | None = None) -> AppTest:
    """A new session of a browser whose cookie holds `token` (a reload, a restart, a reopened
    tab; None: another browser), opened with the link `?plan=link` if given."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if link is not None:
        app.query_params["plan"] = link
    if page is not None:
        app.switch_page(page)
    BROWSER_COOKIE["token"] = token
    try:
        app.run()
    finally:
        BROWSER_COOKIE["token"] = None
    assert not app.exception, app.exception
    return app


def sidebar_metric(app: AppTest, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def texts(app: AppTest) -> str:
    parts = [*app.markdown, *app.caption, *app.info, *app.warning, *app.error, *app.success]
    return "\n".join(str(p.value) for p in parts)


def with_tables(app: AppTest) -> AppTest:
    go(app, "pages/tables.py")
    app.multiselect(key="quick_columns").set_value(["sex", "region"])
    return submit(app, "quick_add_form")


# --- a plan kept and offered back -------------------------------------------------------------


def test_a_reload_offers_the_plan_back_and_asks_for_the_data_again():
    app = with_tables(declare_small_csv(upload_small_csv(open_app())))
    token = workspace(app).token
    assert "plan" not in app.query_params  # the cookie holds the token, never the URL
    plan = workspace(app).plan

    again = reopen(token)
    assert workspace(again).plan != plan  # nothing replaced before the user answers
    assert "Resume your plan from" in texts(again)
    assert "made for **survey.csv**" in texts(again)
    again.button(key="resume_plan").click().run()
    ws = workspace(again)
    assert ws.plan == plan
    assert ws.upload is None  # the data were not kept: asked for again
    assert "Resume your plan" not in texts(again)
    assert "made for **survey.csv**" in " ".join(i.value for i in again.info)
    go(again, "pages/release.py")
    assert any(NO_DATA in i.value for i in again.info)
    go(again, "pages/data.py")
    again.file_uploader(key="data_upload").upload("survey.csv", GAPPY_CSV, "text/csv").run()
    ws = workspace(again)
    assert ws.plan == plan and ws.upload is not None  # checked against them, not replaced
    assert "Rows left out of some table" in " ".join(w.value for w in again.warning)


def test_start_afresh_keeps_the_sample_and_a_fresh_visit_offers_nothing():
    app = go(open_app(), "pages/budget.py")
    app.text_input(key="epsilon_box").set_value("2").run()
    token = workspace(app).token
    again = reopen(token)
    again.button(key="resume_decline").click().run()
    assert workspace(again).plan["budget"]["epsilon"] == 1.0
    assert "Resume your plan" not in texts(again)
    assert "Resume your plan" not in texts(open_app())  # another browser: another token


def test_a_forged_or_unknown_token_offers_nothing():
    for token in ["../../etc/passwd", "x" * 30]:
        app = reopen(None, link=token)
        assert "Resume your plan" not in texts(app) and "from this link" not in texts(app)
        assert workspace(app).token != token  # a fresh token, not one a link chose
        assert "plan" not in app.query_params


def test_a_link_opens_a_copy_and_never_becomes_the_browsers_own():
    """Issue 25.3: an attacker keeps a plan under T and sends `?plan=T`; what the victim types
    afterwards (domains filled from data, the file's name) must never be written under T."""
    attacker = go(open_app(), "pages/budget.py")
    attacker.text_input(key="epsilon_box").set_value("3").run()
    planted = workspace(attacker).token
    store = PlanStore()
    before = store.load(planted)
    assert before is not None

    victim = reopen(None, link=planted)  # a browser without a plan of its own
    assert "Open the plan from this link" in texts(victim)
    assert workspace(victim).token != planted
    victim.button(key="resume_plan").click().run()
    ws = workspace(victim)
    assert ws.plan["budget"]["epsilon"] == 3.0 and ws.token != planted  # a copy, fresh token
    assert "plan" not in victim.query_params  # the link's token leaves the address bar
    go(victim, "pages/data.py")
    upload_small_csv(victim)  # the file name and the domains filled from it
    declare_small_csv(victim)
    assert store.load(planted) == before  # not one write where the link points
    own = store.load(workspace(victim).token)
    assert own is not None and own.data_name == "survey.csv" and "region" in own.plan["columns"]

    # the victim's own browser (its cookie) with a plan of its own: the link comes first as a
    # copy; declining it offers the browser's own plan, which is written where it was
    mine = workspace(victim).token
    again = reopen(mine, link=planted)
    assert "Open the plan from this link" in texts(again)
    again.button(key="resume_decline").click().run()
    assert "Resume your plan from" in texts(again)
    again.button(key="resume_plan").click().run()
    assert workspace(again).token == mine and "region" in workspace(again).plan["columns"]
    assert store.load(planted) == before


def test_scenarios_survive_a_reload_with_the_plan():
    """Issue 24.9: a reload kept the plan but lost the saved scenarios."""
    app = budget_tab(go(open_app(), "pages/budget.py"), "Scenarios")
    app.text_input(key="scenario_name").set_value("baseline").run()
    app.button(key="save_scenario").click().run()
    app.text_input(key="epsilon_box").set_value("4").run()
    ws = workspace(app)
    assert list(ws.scenarios) == ["baseline"]
    again = reopen(ws.token)
    assert "1 saved scenario(s)" in texts(again)
    again.button(key="resume_plan").click().run()
    assert workspace(again).scenarios == ws.scenarios
    assert workspace(again).plan == ws.plan


@pytest.mark.parametrize("page", ["budget", "tables", "preview", "release", "risk", "data"])
def test_while_an_offer_is_pending_no_page_shows_the_samples_figures(page):
    """Issue 24.9: the Budget page showed the bundled sample's figures under the offer."""
    app = with_tables(declare_small_csv(upload_small_csv(open_app())))
    token = workspace(app).token
    again = reopen(token, page=f"pages/{page}.py")
    assert "Resume your plan from" in texts(again)
    assert workspace(again).plan != workspace(app).plan  # the sample, still: shown nowhere
    assert not again.metric and not again.get("plotly_chart") and not again.dataframe
    assert not again.title and not again.table  # the page waits for the answer
    again.button(key="resume_plan").click().run()
    assert again.title and again.metric  # answered: the page and its figures
    assert sidebar_metric(again, "Total ε (plan)") == "1"


# --- plan without data ------------------------------------------------------------------------

CODEBOOK = b"STATE,label\n01,Alabama\n06,California\n08,Colorado\n"
PUMA_CODEBOOK = b"PUMA,parent\n00100,01\n00200,06\n00300,08\n"


def test_a_plan_is_built_weighed_and_saved_without_data():
    app = open_app()
    app.button(key="no_data").click().run()
    ws = workspace(app)
    assert ws.upload is None and ws.plan["columns"] == {}
    app.text_input(key="typed_columns").set_value("SEX, AGEP")
    submit(app, "typed_columns_form")
    assert workspace(app).memo.typed_columns == ["SEX", "AGEP"]
    keyed(app.selectbox, "kind_SEX_").set_value("categorical").run()
    keyed(app.text_area, "domain_SEX_").set_value("1\n2")
    submit(app, "cat_form_SEX_")
    app.file_uploader(key="codebook_only").upload("state.csv", CODEBOOK, "text/csv")
    submit(app, "codebook_column_form")
    assert workspace(app).plan["columns"]["STATE"]["domain"] == ["01", "06", "08"]
    app.file_uploader(key="codebook_only").upload("puma.csv", PUMA_CODEBOOK, "text/csv")
    app.selectbox(key="codebook_only_parent").set_value("STATE")
    submit(app, "codebook_column_form")
    puma = workspace(app).plan["columns"]["PUMA"]
    assert puma["parent"] == "STATE" and puma["parent_map"]["00200"] == "06"
    assert not app.error, [e.value for e in app.error]

    go(app, "pages/tables.py")
    app.multiselect(key="quick_columns").set_value(["SEX", "STATE", "PUMA"])
    submit(app, "quick_add_form")
    go(app, "pages/budget.py")
    assert not app.error, [e.value for e in app.error]
    assert sidebar_metric(app, "Allocated ε") != "—"
    for page in ["pages/preview.py", "pages/release.py"]:
        go(app, page)
        assert any("dprelease release" in i.value for i in app.info), page
    go(app, "pages/data.py")
    saved = yaml.safe_load(_saved_yaml(app))
    assert "data" not in saved  # no data: no name to give
    assert set(saved["columns"]) == {"SEX", "STATE", "PUMA"}


def _saved_yaml(app: AppTest) -> str:
    return plan_yaml(plan_with_data_name(workspace(app)))


def test_a_saved_plan_names_its_data_file_never_a_path():
    app = upload_small_csv(open_app())
    text = _saved_yaml(app)
    assert yaml.safe_load(text)["data"] == "survey.csv"
    assert text.splitlines()[1] == "data: survey.csv"


def test_a_hierarchy_typo_is_refused_with_the_codes_named():
    app = open_app()
    app.button(key="no_data").click().run()
    app.file_uploader(key="codebook_only").upload("state.csv", CODEBOOK, "text/csv")
    submit(app, "codebook_column_form")
    keyed(app.selectbox, "kind_STATE_").run()
    keyed(app.text_area, "domain_STATE_").set_value("01\n6\n06\n08")  # the typo
    submit(app, "cat_form_STATE_")
    app.file_uploader(key="codebook_only").upload("puma.csv", PUMA_CODEBOOK, "text/csv")
    app.selectbox(key="codebook_only_parent").set_value("STATE")
    submit(app, "codebook_column_form")
    errors = [e.value for e in app.error]
    assert errors and "no code of its child 'PUMA' maps to ('6')" in errors[0].replace("\\", "")
    assert "PUMA" not in workspace(app).plan["columns"]  # nothing changed


# --- coverage as a gate -----------------------------------------------------------------------


def test_rows_left_out_show_on_every_page_and_gate_the_release():
    app = open_app()
    app.file_uploader(key="data_upload").upload("gappy.csv", GAPPY_CSV, "text/csv").run()
    app = with_tables(declare_small_csv(app))
    for page in ["pages/tables.py", "pages/budget.py", "pages/preview.py", "pages/release.py"]:
        go(app, page)
        assert any("**150** of 300" in w.value for w in app.sidebar.warning), page
    button = app.button(key="create_release")
    keyed(app.checkbox, "confirm_").check().run()
    assert app.button(key="create_release").disabled  # the gate is still closed
    gate = keyed(app.checkbox, "coverage_ok_")
    assert "150 rows" in gate.label and "region" in gate.label
    assert any("'region': 150" in w.value.replace("\\", "") for w in app.warning)
    gate.check().run()
    button = app.button(key="create_release")
    assert not button.disabled
    button.click().run()
    ws = workspace(app)
    assert ws.release is not None
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        released = b"".join(archive.read(n) for n in archive.namelist()).decode()
    assert "at least one table" not in released and "gappy" not in released  # on screen only


def test_the_sample_needs_no_confirmation():
    app = go(open_app(), "pages/release.py")
    assert not [c for c in app.checkbox if str(c.key).startswith("coverage_ok_")]
    shown = [c.value for c in app.sidebar.caption]
    assert any("Rows left out of some table or statistic: **0**" in c for c in shown)


# --- the releases of the session --------------------------------------------------------------


def test_every_release_of_the_session_stays_downloadable_and_another_asks_first():
    app = go(open_app(), "pages/release.py")
    assert any("Post-processing that will run" in m.value for m in app.markdown)
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    first = workspace(app).release
    app.button(key="new_release").click().run()
    assert any("Prepare another release?" in w.value for w in app.warning)
    app.button(key="new_release_no").click().run()
    assert workspace(app).release is first  # cancelled: nothing changed
    app.button(key="new_release").click().run()
    app.button(key="new_release_yes").click().run()
    assert workspace(app).release is None
    assert release_downloads(app)  # the first is still offered
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    ws = workspace(app)
    assert [r.release_id for r in ws.releases] == [first.release_id, ws.release.release_id]
    keys = {b.proto.id for b in release_downloads(app)}
    assert len(keys) == 3  # the current one, and each of the session's two
    go(app, "pages/data.py")
    go(app, "pages/release.py")
    assert len(release_downloads(app)) == 3


# --- one set of limits, one way to refuse ----------------------------------------------------


def test_epsilon_and_rho_boxes_refuse_what_the_library_refuses_and_name_the_range():
    app = go(open_app(), "pages/budget.py")
    before = workspace(app).plan["budget"].copy()
    app.text_input(key="epsilon_box").set_value("1000").run()
    assert f"at most {EPSILON_LIMIT:g}" in app.error[0].value
    assert workspace(app).plan["budget"] == before
    assert app.text_input(key="epsilon_box").value == "1"  # the box shows the plan again
    assert sidebar_metric(app, "Total ε (plan)") == "1"
    app.toggle(key="use_rho").set_value(True).run()
    app.text_input(key="rho_box").set_value("1000").run()
    assert f"at most {RHO_LIMIT:g}" in app.error[0].value
    assert workspace(app).plan["budget"]["rho"] == 0.01


def test_no_default_and_session_state_warning_and_delta_in_scientific_notation():
    app = go(open_app(), "pages/budget.py")
    app.select_slider(key="epsilon_slider").set_value(2.0).run()
    assert workspace(app).plan["budget"]["epsilon"] == 2.0
    assert app.text_input(key="epsilon_box").value == "2"
    app.text_input(key="delta_box").set_value("1.11e-9").run()
    assert app.text_input(key="delta_box").value == "1.11e-09"
    assert not app.exception and not app.warning, [w.value for w in app.warning]


def test_a_refused_file_leaves_the_uploader():
    app = open_app()
    app.file_uploader(key="data_upload").upload("broken.csv", b"\x00\x01\x02", "text/csv").run()
    assert app.error and "still loaded" in app.error[0].value
    assert not app.file_uploader(key="data_upload_1").value  # a fresh, empty uploader
    app.file_uploader(key="data_upload_1").upload("survey.csv", SMALL_CSV, "text/csv").run()
    assert workspace(app).upload.name == "survey.csv"


def test_the_sidebar_shows_a_loaded_plans_allocation_at_once():
    app = upload_small_csv(open_app())
    plan = yaml.safe_dump(
        {
            "version": 1,
            "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
            "tables": [{"name": "sex", "by": ["sex"]}],
            "budget": {"accounting": "pure", "epsilon": 0.5},
        }
    )
    assert sidebar_metric(app, "Allocated ε") == "—"
    app.file_uploader(key="plan_upload").upload("p.yaml", plan.encode(), "text/yaml").run()
    assert sidebar_metric(app, "Allocated ε") == "0.5"


def test_leaving_with_an_unreleased_plan_asks_first():
    app = open_app()
    guard = [h.proto.body for h in app.get("html") if "beforeunload" in h.proto.body]
    assert guard and "dpreleaseUnreleased = false" in guard[0]  # the untouched sample
    app = with_tables(declare_small_csv(upload_small_csv(app)))
    guard = [h.proto.body for h in app.get("html") if "beforeunload" in h.proto.body]
    assert "dpreleaseUnreleased = true" in guard[0]


def test_every_page_opens_without_data():
    app = with_tables(declare_small_csv(upload_small_csv(open_app())))
    go(app, "pages/data.py")
    app.button(key="no_data").click().run()
    assert workspace(app).upload is None and workspace(app).plan["tables"]  # the plan stays
    for page in ["tables", "budget", "preview", "release", "local_dp", "risk", "data"]:
        go(app, f"pages/{page}.py")  # no exception on any page
        if page in ("preview", "release", "risk"):
            assert any(NO_DATA in i.value for i in app.info), page
        if page in ("tables", "budget"):
            assert not app.error, (page, [e.value for e in app.error])


def test_quick_add_columns_are_kept_between_visits():
    app = go(declare_small_csv(upload_small_csv(open_app())), "pages/tables.py")
    assert app.multiselect(key="quick_columns").value == ["sex", "region", "age"]
    app.multiselect(key="quick_columns").set_value(["region"])
    submit(app, "quick_add_form")
    go(app, "pages/budget.py")
    go(app, "pages/tables.py")
    assert app.multiselect(key="quick_columns").value == ["region"]


def test_an_epsilon_what_if_reuses_the_margin_of_error_curve():
    app = budget_tab(go(open_app(), "pages/budget.py"), "Margin of error vs ε")
    first = workspace(app).memo.curve
    assert first is not None and first[1].current == 1.0
    app.text_input(key="epsilon_box").set_value("1.5").run()
    assert not app.exception and not app.error
    again = workspace(app).memo.curve
    assert again is not None and again[1].budgets == first[1].budgets  # not re-allocated
    app.text_input(key="epsilon_box").set_value("50").run()  # outside the grid: re-allocated
    moved = workspace(app).memo.curve
    assert moved is not None and moved[1].current == 50.0 and moved[1].budgets != first[1].budgets


def test_data_uploaded_after_the_plan_was_kept_are_named_in_the_offer(tmp_path):
    """Issue 37.6: a plan kept before its data were uploaded (the plan unchanged since) is
    offered back as made for that file, not "made without data"."""
    from ui.state import Upload, Workspace

    store = PlanStore(tmp_path)
    ws = Workspace(plan={"version": 1, "columns": {}, "tables": []}, upload=None)
    session.keep_plan(ws, store)
    ws.set_data(Upload.of("survey.csv", b"sex\nF\n", is_sample=False))
    session.keep_plan(ws, store)  # the plan is the same; the data are new
    kept = store.load(ws.token)
    assert kept is not None and kept.data_name == "survey.csv"
