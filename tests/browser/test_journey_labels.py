"""A codebook-coded file in a real browser (Debian's Chromium, Playwright, `streamlit run`):
numeric codes with leading zeros, 'N' for not applicable, labels from codebook CSVs and from the
labels box; the preview shows "label (code)"; the release's CSVs carry `C_label` columns.

With DPRELEASE_SCREENSHOTS=1 it also renews docs/screenshots/6-labels-*.png.
"""

from __future__ import annotations

import json

import pytest

from helpers.browser import (
    BROWSER_TEST,
    CHROMIUM_FLAGS,
    choose_kind,
    chromium_path,
    coded_census_csv,
    column_expander,
    create_and_download_release,
    go,
    import_codebook,
    rows_of,
    shoot,
    streamlit_server,
    wait_idle,
)

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST
STATE_BOOK = "code,label\n01,Alabama\n06,California\n08,Colorado\n"
ESR_BOOK = "value,description\n1,Employed\n2,Unemployed\nN,Not applicable (under 16)\n"


def test_codebook_labels_from_upload_to_released_csvs(tmp_path):
    (tmp_path / "coded.csv").write_text(coded_census_csv(esr_codes=2), encoding="utf-8")
    (tmp_path / "states.csv").write_text(STATE_BOOK, encoding="utf-8")
    (tmp_path / "esr.csv").write_text(ESR_BOOK, encoding="utf-8")
    with (
        streamlit_server(tmp_path / "ledger.sqlite") as url,
        playwright_api.sync_playwright() as driver,
    ):
        chromium = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(60_000)
        page.goto(url)
        page.get_by_role("heading", name="1 · Data").wait_for()
        wait_idle(page)
        page.locator(
            '.st-key-data_upload [data-testid="stFileUploaderDropzoneInput"]'
        ).set_input_files(str(tmp_path / "coded.csv"))
        page.get_by_text("Loaded coded.csv").wait_for()
        wait_idle(page)

        import_codebook(page, "STATE", tmp_path / "states.csv")
        page.get_by_text("STATE — categorical, 3 values, 3 labelled").wait_for()
        import_codebook(page, "ESR", tmp_path / "esr.csv")
        page.get_by_text("ESR — categorical, 3 values, 3 labelled").wait_for()
        choose_kind(page, "SEX", "categorical")
        box = column_expander(page, "SEX")
        box.locator('textarea[aria-label^="Public domain"]').fill("1\n2")
        box.locator('textarea[aria-label^="Labels"]').fill("1 = Male\n2 = Female")
        box.get_by_role("button", name="Apply domain").click()
        wait_idle(page)
        page.get_by_text("SEX — categorical, 2 values, 2 labelled").wait_for()
        shoot(page, "6-labels-data")

        go(page, "2 · Tables")
        page.get_by_role("button", name="Every 2-way table of these").click()
        wait_idle(page)
        page.get_by_text("3 tables, 21 cells in all").wait_for()

        go(page, "4 · Preview")
        page.get_by_role("button", name="Draw a preview").click()
        wait_idle(page)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.wait_for()
        page.wait_for_timeout(1000)  # Plotly draws its SVG after the element appears
        drawn = chart.inner_text()
        assert "Alabama (01)" in drawn and "Not applicable (under 16) (N)" in drawn, drawn
        chart.scroll_into_view_if_needed()
        shoot(page, "6-labels-preview")

        go(page, "5 · Release")
        archive = create_and_download_release(page)
        chromium.close()

    state_sex = rows_of(archive, "tables/STATE_by_SEX.csv")
    assert state_sex[0] == ["STATE", "STATE_label", "SEX", "SEX_label", "count", "moe"]
    assert [r[:4] for r in state_sex[1:3]] == [
        ["01", "Alabama", "1", "Male"],
        ["01", "Alabama", "2", "Female"],
    ]
    assert len(state_sex) == 1 + 3 * 2
    esr = rows_of(archive, "tables/STATE_by_ESR.csv")
    assert esr[0] == ["STATE", "STATE_label", "ESR", "ESR_label", "count", "moe"]
    assert esr[3][:4] == ["01", "Alabama", "N", "Not applicable (under 16)"]
    # what was measured (strategy auto chooses) carries the labels too
    with_esr = [
        m for m in json.loads(archive.read("metadata.json"))["measurements"] if "ESR" in m["by"]
    ]
    measured = rows_of(archive, with_esr[0]["file"])
    assert {"ESR", "ESR_label"} <= set(measured[0]) and measured[0][-1] == "noise_std"
    report = archive.read("report.html").decode()
    assert "<td>08</td><td>Colorado</td>" in report  # the domain, not the data
    assert "<td>N</td><td>Not applicable (under 16)</td>" in report
