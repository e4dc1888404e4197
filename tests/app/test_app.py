"""Every dashboard page, driven headlessly with Streamlit's AppTest: on the bundled sample,
with an uploaded file, through a release that the ledger charges exactly once."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

from dprelease.budget_text import budget_text
from dprelease.ledger.store import Ledger
from dprelease.plan.edit import set_budget
from dprelease.plan.yaml_text import plan_yaml
from helpers.app import (
    ROOT,
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
from ui.state import records_key

PAGES = [
    "pages/data.py",
    "pages/tables.py",
    "pages/budget.py",
    "pages/preview.py",
    "pages/release.py",
]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_the_sample_without_errors(page):
    app = go(open_app(), page)
    assert not app.error, [e.value for e in app.error]
    assert app.title[0].value.endswith(page.split("/")[1][:-3].capitalize())


@pytest.mark.parametrize(
    ("page", "title"), [("pages/risk.py", "Risk"), ("pages/local_dp.py", "Local DP")]
)
def test_the_pages_beside_the_release_open_on_the_sample_without_errors(page, title):
    app = go(open_app(), page)
    assert not app.error, [e.value for e in app.error]
    assert app.title[0].value == title


def test_sidebar_meter_shows_total_allocated_spent_and_left():
    app = open_app()
    meter = {m.label: m.value for m in app.sidebar.metric}
    assert set(meter) == {"Total ε (plan)", "Allocated ε", "Spent ε", "Left ε"}
    assert meter["Spent ε"] == "0" and meter["Left ε"] == "∞"


def test_budget_table_matches_the_cli_plan_command(tmp_path):
    app = go(open_app(), "pages/budget.py")
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(plan_yaml(workspace(app).plan), encoding="utf-8")
    printed = subprocess.run(
        [sys.executable, "-m", "dprelease", "plan", str(plan_file), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    expected = json.loads(printed.stdout)["tables"]
    shown = _budget_frame(app)
    assert list(shown["table"]) == [t["name"] for t in expected]
    assert list(shown["cells"]) == [t["cells"] for t in expected]
    for column, key in (("ε", "epsilon"), ("ρ", "rho"), ("expected RMSE", "expected_rmse")):
        for value, entry in zip(shown[column], expected, strict=True):
            if entry[key] is None:  # a derived table has no budget of its own
                assert value is None or math.isnan(value)
            else:
                assert value == pytest.approx(entry[key], rel=1e-12)
    moe_column = next(c for c in shown.columns if c.startswith("MoE per cell"))
    assert list(shown[moe_column]) == pytest.approx([t["moe"] for t in expected], rel=1e-12)
    assert list(shown["MoE whole table"]) == pytest.approx(
        [t["moe_table"] for t in expected], rel=1e-12
    )


def frame_with(app: AppTest, column: str):
    """The first table on the page with this column (st.dataframe keeps no key here)."""
    frames = [e.value for e in app.dataframe if column in e.value.columns]
    assert frames, f"no table with a column {column!r} on the page"
    return frames[0]


def _budget_frame(app: AppTest):
    return frame_with(app, "MoE whole table")


def test_epsilon_box_refuses_bad_values_and_keeps_the_plan():
    app = go(open_app(), "pages/budget.py")
    before = workspace(app).plan["budget"].copy()
    for bad in ["0", "-1", "nan", "1e308", "abc"]:
        app.text_input(key="epsilon_box").set_value(bad).run()
        assert app.error, bad
        assert "ε" in app.error[0].value
        assert workspace(app).plan["budget"] == before
    app.text_input(key="epsilon_box").set_value("2").run()
    assert workspace(app).plan["budget"]["epsilon"] == 2.0
    assert not app.error


def test_the_budget_boxes_refuse_with_the_plans_own_check():
    """Issue 36.3: the dashboard keeps no range of its own; a refused ε says what the plan's
    parser says of the same number (and the plan keeps its last good value)."""
    from dprelease.errors import PlanError
    from dprelease.plan.table_spec import check_epsilon

    app = go(open_app(), "pages/budget.py")
    app.text_input(key="epsilon_box").set_value("1e9").run()
    try:
        check_epsilon(1e9, "ε")
    except PlanError as error:
        expected = str(error)
    assert expected in app.error[0].value
    assert "It is unchanged." in app.error[0].value


def test_delta_box_refuses_zero_one_and_underflow():
    app = go(open_app(), "pages/budget.py")
    for bad in ["0", "1", "1e-400", "2"]:
        app.text_input(key="delta_box").set_value(bad).run()
        assert app.error and "δ" in app.error[0].value, bad
    assert workspace(app).plan["budget"]["delta"] == 1e-10


def test_accounting_switch_reallocates_with_laplace_noise():
    app = go(open_app(), "pages/budget.py")
    app.selectbox(key="accounting").set_value("pure").run()
    assert not app.exception
    assert set(_budget_frame(app)["mechanism"]) == {"discrete_laplace"}


def test_scenarios_are_saved_and_compared():
    app = budget_tab(go(open_app(), "pages/budget.py"), "Scenarios")
    app.text_input(key="scenario_name").set_value("baseline").run()
    app.button(key="save_scenario").click().run()
    app.text_input(key="epsilon_box").set_value("4").run()
    table = frame_with(app, "baseline")
    assert {"baseline", "current"} <= set(table.columns)


def test_upload_starts_a_clean_plan_and_declares_domains():
    app = declare_small_csv(upload_small_csv(open_app()))
    ws = workspace(app)
    assert ws.upload.name == "survey.csv" and not ws.upload.is_sample
    assert ws.plan["columns"] == {
        "sex": {"kind": "categorical", "domain": ["F", "M"]},
        "region": {"kind": "categorical", "domain": ["north", "south", "east", "west"]},
        "age": {"kind": "numeric", "bins": [0, 18, 65, 120]},
    }
    captions = " ".join(c.value for c in app.caption)
    assert "100.0% of rows in the domain" in captions


def test_a_bad_upload_is_refused_and_the_previous_data_stays():
    app = open_app()
    before = workspace(app).upload
    app.file_uploader(key="data_upload").upload("broken.csv", b"\x00\x01\x02", "text/csv")
    app.run()
    assert not app.exception
    assert app.error and "previous data set is still loaded" in app.error[0].value
    assert workspace(app).upload == before


def test_a_bad_domain_is_refused_and_nothing_changes():
    app = upload_small_csv(open_app())
    keyed(app.selectbox, "kind_age_").set_value("numeric").run()
    keyed(app.text_input, "edges_age_").set_value("0, ten, 20")
    submit(app, "num_form_age_")
    assert app.error and "not a number" in app.error[0].value
    assert "age" not in workspace(app).plan["columns"]


def test_fill_from_data_needs_consent_and_is_recorded():
    app = upload_small_csv(open_app())
    keyed(app.selectbox, "kind_region_").set_value("categorical").run()
    assert not [b for b in app.button if str(b.key).startswith("fill_region_")]
    keyed(app.checkbox, "leak_ok_region_").check().run()
    assert any("reveals which values occur" in w.value for w in app.warning)
    keyed(app.button, "fill_region_").click().run()
    column = workspace(app).plan["columns"]["region"]
    assert column == {
        "kind": "categorical",
        "domain": ["east", "north", "south"],
        "domain_source": "data",
    }


def test_a_bad_plan_file_is_refused_and_the_plan_kept():
    app = open_app()
    before = workspace(app).plan
    app.file_uploader(key="plan_upload").upload(
        "plan.yaml", b"budget: {epsilon: -1}\n", "text/yaml"
    )
    app.run()
    assert app.error and "unchanged" in app.error[0].value
    assert workspace(app).plan == before


def add_tables(app: AppTest) -> AppTest:
    go(app, "pages/tables.py")
    app.multiselect(key="quick_columns").set_value(["sex", "region", "age"])
    submit(app, "quick_add_form")  # every 1-way table
    app.multiselect(key="new_table_by").set_value(["age", "sex"])
    submit(app, "add_table_form")
    return app


def test_tables_page_adds_quick_tables_and_counts_cells():
    app = add_tables(declare_small_csv(upload_small_csv(open_app())))
    names = [t["name"] for t in workspace(app).plan["tables"]]
    assert names == ["sex", "region", "age", "age_by_sex"]
    assert any("4 tables, 15 cells in all" in m.value for m in app.markdown)


def test_journey_preview_then_release_charged_exactly_once(ledger_file):
    app = add_tables(declare_small_csv(upload_small_csv(open_app())))
    go(app, "pages/budget.py")
    app.text_input(key="epsilon_box").set_value("2").run()
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception
    preview = workspace(app).preview
    assert preview is not None
    assert app.table[0].value.shape[0] == 2  # MAE, RMSE... before and after
    assert not [b for b in app.get("download_button")]  # nothing from a preview leaves

    go(app, "pages/release.py")
    button = app.button(key="create_release")
    assert button.disabled  # needs the confirmation first
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    ws = workspace(app)
    assert ws.release is not None
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        names = set(archive.namelist())
        metadata = json.loads(archive.read("metadata.json"))
    assert {"metadata.json", "report.html", "tables/age_by_sex.csv"} <= names
    assert metadata["total"]["epsilon"] <= 2.0
    entries = Ledger(ledger_file).entries(records_key(ws))
    assert len(entries) == 1 and entries[0].epsilon == pytest.approx(metadata["total"]["epsilon"])

    app.run()  # a rerun neither draws nor charges again
    go(app, "pages/release.py")
    assert len(Ledger(ledger_file).entries(records_key(ws))) == 1
    assert release_downloads(app)
    assert Ledger(ledger_file).balance(records_key(ws)).spent_epsilon == entries[0].epsilon
    history = next(d.value for d in app.dataframe if "accounting" in d.value.columns)
    if entries[0].delta == 0:  # issue 37: a pure release's δ reads "0", never "0.0e+0"
        assert history["δ"].tolist() == ["0"]
    assert history["ε"].tolist() == [budget_text(entries[0].epsilon)]


def test_budget_meter_shows_what_the_ledger_holds_for_this_data(ledger_file):
    from dprelease.accounting.composition import Guarantee
    from dprelease.data.fingerprint import fingerprint_table
    from dprelease.data.read import read_data

    sample = fingerprint_table(read_data(ROOT / "data" / "census_sample.csv")).key()
    book = Ledger(ledger_file)
    book.set_cap(sample, 3.0)
    with book.charge(sample, "earlier", Guarantee(1.25, 1e-10), label="earlier", tables=["t"]):
        pass
    meter = {m.label: m.value for m in open_app().sidebar.metric}  # sidebar: first run only
    assert meter["Spent ε"] == "1.25" and meter["Left ε"] == "1.75"


def test_release_is_refused_when_the_cap_is_too_small(ledger_file):
    app = go(open_app(), "pages/release.py")
    app.number_input(key="cap_input").set_value(0.5).run()
    app.button(key="set_cap").click().run()
    assert app.error and "raise the cap" in app.error[0].value
    message = app.error[0].value
    assert message.count("raise the cap") == 1 and message.count("ower the budget") == 1  # once
    assert "is left of the lifetime cap 0.5 for this data set" in message  # not 0.5000000000000001
    assert app.button(key="create_release").disabled
    assert Ledger(ledger_file).entries(records_key(workspace(app))) == []


def test_the_release_page_sets_a_first_cap_and_lowers_it_but_never_raises_it(ledger_file):
    """Issue 25.11: naming a `dataset:` and typing a higher cap used to raise it."""
    app = go(open_app(), "pages/release.py")
    account = records_key(workspace(app))
    book = Ledger(ledger_file)
    app.number_input(key="cap_input").set_value(3.0).run()
    app.button(key="set_cap").click().run()  # a first cap
    assert book.balance(account).cap_epsilon == 3.0
    assert any("ledger cap" in c.value for c in app.caption)  # the page says who raises it
    cap = app.number_input(key="cap_input")
    assert cap.max == 3.0  # the box offers no higher value
    app.number_input(key="cap_input").set_value(2.0).run()
    app.button(key="set_cap").click().run()
    assert book.balance(account).cap_epsilon == 2.0
    app.text_input(key="dataset_name").set_value("census sample").run()  # a name changes nothing
    app.number_input(key="cap_input").set_value(5.0)
    app.button(key="set_cap").click().run()
    assert book.balance(account).cap_epsilon == 2.0  # the ledger refuses a raise in any case
    assert app.number_input(key="cap_input").max == 2.0


def test_same_release_id_is_never_charged_twice(ledger_file):
    app = go(open_app(), "pages/release.py")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    ws = workspace(app)
    first = ws.release
    ws.release = None  # as if a second click arrived before the page showed the result
    app.run()
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert any("already made and charged" in i.value for i in app.info)
    assert len(Ledger(ledger_file).entries(records_key(ws))) == 1
    assert first is not None


def test_the_release_page_names_the_account_and_checks_delta(ledger_file):
    from dprelease.accounting.composition import Guarantee

    app = go(open_app(), "pages/release.py")
    ws = workspace(app)
    ws.plan = set_budget(ws.plan, accounting="zcdp")  # a release that spends δ
    app.run()
    app.text_input(key="dataset_name").set_value("census sample").run()
    assert ws.plan["dataset"] == "census sample"
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    book = Ledger(ledger_file)
    assert book.datasets() == [(records_key(ws), "census sample")]
    # The δ cap is kept by "Set cap" and enforced: spend nearly all of it, then the page refuses.
    book.set_cap(records_key(ws), None, 3.5e-10)  # 1e-10 for the Rényi filter, 2.5e-10 summed
    app.button(key="new_release").click().run()
    app.button(key="new_release_yes").click().run()  # "Prepare another" asks first
    app.number_input(key="cap_input").set_value(50.0).run()
    app.button(key="set_cap").click().run()
    assert book.balance(records_key(ws)).cap_delta == 3.5e-10
    with book.charge(records_key(ws), "other", Guarantee(0.1, 1e-10), label="x", tables=["t"]):
        pass
    app.run()
    assert any("lifetime δ cap" in e.value for e in app.error), [e.value for e in app.error]
    assert app.button(key="create_release").disabled


def test_a_name_typed_on_the_release_page_shows_nothing_of_another_data_set(ledger_file):
    # Issue 34: typing another data set's `dataset:` name showed its release history, let the
    # session lower its cap to nothing and spend it with other records.
    from dprelease.accounting.composition import Guarantee

    book = Ledger(ledger_file)
    other = "e" * 64
    book.set_cap(other, 4.0, name="hospital-2024")
    with book.charge(other, "theirs", Guarantee(1.0, None), label="x", tables=["t"]):
        pass
    app = go(open_app(), "pages/release.py")
    app.text_input(key="dataset_name").set_value("hospital-2024").run()
    assert any("holds other records" in e.value for e in app.error), [e.value for e in app.error]
    assert not app.dataframe  # no release history of the other data set
    assert not [b for b in app.button if b.key in ("set_cap", "create_release")]
    assert book.balance(other).cap_epsilon == 4.0 and book.balance(other).releases == 1
