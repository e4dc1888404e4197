"""Issue 13's journey in a real browser (Debian's Chromium, Playwright, `streamlit run app.py`):
a codebook-coded file (codes with leading zeros, 'N' for not applicable, a codebook CSV with
labels), a reload in the middle that asks first and ends with the plan resumed and the data
asked for again, then two releases, the first still downloadable after the second."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from helpers.browser import (
    BROWSER_TEST,
    EPSILON_BOX,
    STATES,
    choose_kind,
    coded_census_csv,
    column_expander,
    create_release,
    download,
    file_input,
    go,
    type_epsilon,
    wait_idle,
)

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST

CODEBOOK = "STATE,label\n01,Alabama\n06,California\n08,Colorado\n"


def apply_domain(page, name: str, values: str | None = None, codebook: Path | None = None):
    box = column_expander(page, name)
    if codebook is not None:
        box.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(codebook))
        wait_idle(page)
    if values is not None:
        box.locator("textarea").first.fill(values)
    box.get_by_role("button", name="Apply domain").click()
    wait_idle(page)
    page.get_by_text(f"{name} — categorical").wait_for()


def upload_data(page, path: Path) -> None:
    page.locator(file_input("data_upload")).set_input_files(str(path))
    page.get_by_text(f"Loaded {path.name}").wait_for()
    wait_idle(page)


def test_a_reload_resumes_the_plan_and_every_release_stays_downloadable(server, browser, tmp_path):
    data = tmp_path / "persons.csv"
    data.write_text(coded_census_csv(), encoding="utf-8")
    codebook = tmp_path / "state_codebook.csv"
    codebook.write_text(CODEBOOK, encoding="utf-8")

    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(server)
    page.get_by_role("heading", name="1 · Data").wait_for()
    wait_idle(page)
    upload_data(page, data)
    choose_kind(page, "STATE", "categorical")
    apply_domain(page, "STATE", codebook=codebook)
    choose_kind(page, "SEX", "categorical")
    apply_domain(page, "SEX", values="1\n2")
    choose_kind(page, "ESR", "categorical")
    apply_domain(page, "ESR", values="1\n2\n3\nN")
    go(page, "2 · Tables")
    page.get_by_role("button", name="Every 1-way table of these").click()
    wait_idle(page)
    page.get_by_text("3 tables").first.wait_for()
    go(page, "3 · Budget")
    type_epsilon(page, "2")
    wait_idle(page)
    # the run that applies ε = 2 (and keeps the plan) has finished before the reload
    page.get_by_text("The whole release is ε = 2").wait_for()
    assert "plan=" not in page.url  # the token is in the cookie only, never the address bar

    # --- a reload in the middle: the browser asks first, then the plan is offered back
    prompts: list[str] = []

    def on_dialog(dialog) -> None:
        prompts.append(dialog.type)
        dialog.accept()

    page.on("dialog", on_dialog)
    page.reload()  # on the Budget page: the reload stays there
    page.get_by_text("Resume your plan from").wait_for()
    wait_idle(page)
    assert prompts == ["beforeunload"]
    assert "made for persons.csv" in page.locator(".st-key-resume_box").inner_text()
    page.locator(".st-key-resume_plan").get_by_role("button").click()
    wait_idle(page)
    go(page, "1 · Data")
    page.get_by_text("This plan was made for").wait_for()  # the data are asked for again
    assert "none yet" in page.locator('[data-testid="stSidebar"]').inner_text()
    upload_data(page, data)
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "persons.csv" in sidebar and "Rows left out of some table or statistic: 0" in sidebar
    go(page, "3 · Budget")
    playwright_api.expect(page.locator(EPSILON_BOX)).to_have_value("2")  # retried while drawn

    # --- two releases; the first stays downloadable
    go(page, "5 · Release")
    page.get_by_text("Post-processing that will run").wait_for()
    zips = []
    for number in (1, 2):
        zips.append(create_release(page))
        if number == 1:
            page.get_by_role("button", name="Prepare another release").click()
            wait_idle(page)
            page.get_by_role("button", name="Yes, prepare another").click()
            wait_idle(page)
            page.get_by_role("button", name="Download release 1 (zip)").wait_for()
    assert download(page, "Download release 1 (zip)") == zips[0] != zips[1]
    for blob in zips:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            state = archive.read("tables/STATE.csv").decode().splitlines()
            assert [line.split(",")[0] for line in state[1:]] == STATES  # leading zeros kept
    assert page.get_by_role("button", name="Download release 2 (zip)").count() == 1
    # released: leaving no longer asks (the plan was released)
    prompts.clear()
    page.reload()
    # the cookie finds the plan again; until answered the offer is the page (issue 24.9)
    page.get_by_text("Resume your plan from").wait_for()
    wait_idle(page)
    assert page.get_by_role("heading", name="5 · Release").count() == 0
    assert "Total ε (plan)" not in page.locator('[data-testid="stSidebar"]').inner_text()
    assert prompts == []
    page.locator(".st-key-resume_plan").get_by_role("button").click()
    page.get_by_role("heading", name="5 · Release").wait_for()
    context.close()
