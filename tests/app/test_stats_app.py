"""Issue 16 in the dashboard: discover a domain on the Data page, add a statistic on the
Tables page, see its error on Budget, its preview on Preview, and release it charged once."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from dprelease.ledger.store import Ledger
from helpers.app import go, keyed, open_app, submit, workspace
from ui.state import records_key


def _with_statistic_and_discovery():
    app = go(open_app(), "pages/data.py")
    keyed(app.number_input, "min_count_county_").set_value(30)
    submit(app, "discover_form_county_")
    assert not app.error, [e.value for e in app.error]
    county = workspace(app).plan["columns"]["county"]
    assert county == {"kind": "categorical", "domain": {"discover": {"min_count": 30}}}
    go(app, "pages/tables.py")
    app.multiselect(key="new_stat_by").set_value(["sex"])
    app.selectbox(key="new_stat_kind").set_value("quantile")
    app.text_input(key="new_stat_column").set_value("age")
    app.text_input(key="new_stat_quantiles").set_value("0.25, 0.5")
    submit(app, "add_statistic_form")
    assert not app.error, [e.value for e in app.error]
    added = workspace(app).plan["tables"][-1]
    assert added["stat"] == {"quantile": [0.25, 0.5], "column": "age", "bounds": [0, 100]}
    grid = app.dataframe[0].value if app.dataframe else None
    shown = [e.value for e in app.caption]
    assert any("unknown to this page" in text for text in shown)
    assert grid is None or "statistic" in grid.columns
    return app, added["name"]


def test_tables_page_refuses_a_bad_statistic_in_one_line():
    app = go(open_app(), "pages/tables.py")
    app.text_input(key="new_stat_column").set_value("age")
    app.number_input(key="new_stat_lo").set_value(5.0)
    app.number_input(key="new_stat_hi").set_value(1.0)
    submit(app, "add_statistic_form")
    assert [e.value for e in app.error if "must have lo" in e.value]
    assert not any("stat" in t for t in workspace(app).plan["tables"])


def test_budget_shows_each_statistic_and_its_error():
    app, name = _with_statistic_and_discovery()
    go(app, "pages/budget.py")
    assert not app.error, [e.value for e in app.error]
    frame = next(d.value for d in app.dataframe if "statistic" in d.value.columns)
    assert name in list(frame["statistic"]) and "discover county" in list(frame["statistic"])
    assert any(str(v).startswith("rank ±") for v in frame["margin of error"])


def test_preview_and_release_show_statistics_next_to_counts(ledger_file):
    app, name = _with_statistic_and_discovery()
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    preview = workspace(app).preview
    assert [s.name for s in preview.statistics] == [name]
    assert "county" in preview.discovered
    assert any("PREVIEW noise" in m.value for m in app.markdown)
    assert any("exact margin in rank" in c.value for c in app.caption)
    assert set(preview.statistic_errors[name][0]) == {
        "±rank q=0.25",
        "±value q=0.25",
        "±rank q=0.5",
        "±value q=0.5",
    }
    assert not app.get("download_button")

    go(app, "pages/release.py")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    ws = workspace(app)
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        lines = archive.read(f"tables/{name}.csv").decode().splitlines()
        metadata = json.loads(archive.read("metadata.json"))
    assert lines[0] == "sex,quantile,value,moe" and len(lines) == 1 + 2 * 2
    assert metadata["columns"]["county"]["domain_source"] == "discovered"
    entries = Ledger(ledger_file).entries(records_key(ws))
    assert len(entries) == 1 and name in entries[0].tables
    assert "Statistics" in ws.release.report_html


def test_sparse_vector_suggestion_is_charged_once_before_it_is_shown(ledger_file):
    app = go(open_app(), "pages/release.py")
    plan_tables = [t["name"] for t in workspace(app).plan["tables"]]
    app.multiselect(key="suggest_tables").set_value(plan_tables[:3])
    app.number_input(key="suggest_t").set_value(1_000_000)  # no cell that large: all ⊥
    submit(app, "suggest_form")
    assert not app.exception and not app.error, [e.value for e in app.error]
    ws = workspace(app)
    assert ws.suggestion.answer.above == (False, False, False)
    entries = Ledger(ledger_file).entries(records_key(ws))
    assert len(entries) == 1 and entries[0].epsilon == 0.1
    assert entries[0].tables == tuple(plan_tables[:3])
    assert any("no cell above T" in str(t.value) for t in app.table)


# --- issue 24, point 5: statistics say what they use ----------------------------------------


def _median_income_app():
    """ACS-like data whose PINCP has N and empty values; STATE labelled; a median of PINCP."""
    from helpers.income_data import INCOME_CSV

    app = open_app()
    app.file_uploader(key="data_upload").upload("acs.csv", INCOME_CSV, "text/csv").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    keyed(app.selectbox, "kind_STATE_").set_value("categorical").run()
    keyed(app.text_area, "domain_STATE_").set_value("01\n06")
    keyed(app.text_area, "labels_STATE_").set_value("01 = Alabama\n06 = California")
    submit(app, "cat_form_STATE_")
    assert not app.error, [e.value for e in app.error]
    go(app, "pages/tables.py")
    app.multiselect(key="new_table_by").set_value(["STATE"])  # a count table loses no row
    submit(app, "add_table_form")
    app.multiselect(key="new_stat_by").set_value(["STATE"])
    app.selectbox(key="new_stat_kind").set_value("quantile")
    app.text_input(key="new_stat_column").set_value("PINCP")
    app.number_input(key="new_stat_hi").set_value(200000.0)
    submit(app, "add_statistic_form")
    assert not app.error, [e.value for e in app.error]
    return app


NAME = "quantile_PINCP_by_STATE"


@pytest.mark.usefixtures("app_py_every_run")  # the sidebar is drawn on every run
def test_the_sidebar_counts_rows_a_statistic_leaves_out():
    from helpers.income_data import NO_NUMBER, ROWS

    app = _median_income_app()
    line = (
        f"Rows left out of some table or statistic: **{NO_NUMBER:,}** of {ROWS:,} "
        f"({NO_NUMBER / ROWS:.1%}"
    )
    for page in ["pages/tables.py", "pages/budget.py", "pages/release.py"]:
        shown = [w.value for w in go(app, page).sidebar.warning]
        assert any(line in text and "PINCP" in text for text in shown), (page, shown)


def test_budget_shows_and_sets_a_quantiles_resolution_and_release_states_the_rule(ledger_file):
    from helpers.income_data import ABOVE, NO_NUMBER, ROWS, assert_no_count

    app = go(_median_income_app(), "pages/budget.py")
    assert not app.error, [e.value for e in app.error]
    frame = next(d.value for d in app.dataframe if "statistic" in d.value.columns)
    assert list(frame["resolution"]) == [200]  # the default grid of [0, 200000], shown
    box = keyed(app.text_input, f"resolution_{NAME}_")
    assert box.value == "200"
    box.set_value("0").run()  # refused in one line, the plan keeps its resolution
    assert any("resolution must be a number above 0" in e.value for e in app.error)
    assert "resolution" not in workspace(app).plan["tables"][-1]["stat"]
    keyed(app.text_input, f"resolution_{NAME}_").set_value("5000").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert workspace(app).plan["tables"][-1]["stat"]["resolution"] == 5000
    frame = next(d.value for d in app.dataframe if "statistic" in d.value.columns)
    assert list(frame["resolution"]) == [5000]
    assert keyed(app.text_input, f"resolution_{NAME}_").value == "5000"

    go(app, "pages/release.py")
    shown = [w.value.replace("\\", "") for w in app.warning]
    assert any(f"'{NAME}' ('PINCP'): {NO_NUMBER:,}" in text for text in shown), shown
    keyed(app.checkbox, "confirm_").check().run()
    assert app.button(key="create_release").disabled  # the coverage gate is not confirmed yet
    keyed(app.checkbox, "coverage_ok_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    ws = workspace(app)
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    lines = files[f"tables/{NAME}.csv"].splitlines()
    assert lines[0] == "STATE,STATE_label,value,moe"  # moe: issue 37.5
    assert [line.split(",")[1] for line in lines[1:]] == ["Alabama", "California"]
    assert all(float(line.split(",")[2]) % 5000 == 0 for line in lines[1:])
    entry = next(t for t in json.loads(files["metadata.json"])["tables"] if "stat" in t)
    assert entry["resolution"] == 5000 and entry["stat"]["resolution"] == 5000
    assert "over the rows where PINCP is a number" in entry["rows_used"]
    assert "over the rows where PINCP is a number" in ws.release.report_html
    for text in files.values():
        assert_no_count(text, NO_NUMBER, ABOVE, ROWS - NO_NUMBER)
