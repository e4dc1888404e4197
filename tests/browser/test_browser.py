"""The main user journey in a real browser: Debian's Chromium, driven by Playwright, against
`streamlit run app.py`. Upload a CSV, declare domains, add tables, set ε, preview, release,
download and open the zip. Also: two browser sessions at once never see each other's data.

With DPRELEASE_SCREENSHOTS=1, screenshots of every page go to docs/screenshots/ (the README
shows them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.browser import (
    BROWSER_TEST,
    choose_kind,
    column_expander,
    create_and_download_release,
    file_input,
    go,
    shoot,
    type_epsilon,
    wait_idle,
)

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST
SURVEY = "sex,age,region\n" + "".join(
    f"{'F' if i % 3 else 'M'},{(i * 7) % 90},{['north', 'south', 'east'][i % 3]}\n"
    for i in range(300)
)


def reload_as_new_session(page) -> None:
    """A reload is a new session; a browser whose plan was kept is offered it back first, and
    the offer is the whole page (issue 24): start afresh, which keeps nothing of the data."""
    page.reload()
    heading = page.get_by_role("heading", name="1 · Data")
    offer = page.locator(".st-key-resume_box")
    heading.or_(offer).first.wait_for()
    wait_idle(page)
    if offer.count():
        page.locator(".st-key-resume_decline").get_by_role("button").click()
        heading.wait_for()
        wait_idle(page)


def open_page(browser, url: str):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    page.get_by_role("heading", name="1 · Data").wait_for()
    wait_idle(page)
    return page


def declare(page, name: str, kind: str, fill: str) -> None:
    choose_kind(page, name, kind)
    box = column_expander(page, name)
    if kind == "categorical":
        box.locator("textarea").first.fill(fill)
        box.get_by_role("button", name="Apply domain").click()
    else:
        box.locator('input[aria-label^="Edges"]').fill(fill)
        box.get_by_role("button", name="Apply bins").click()
    wait_idle(page)
    page.get_by_text(f"{name} — {kind}").wait_for()


def upload(page, tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    page.locator(file_input("data_upload")).set_input_files(str(path))
    page.get_by_text(f"Loaded {name}").wait_for()
    wait_idle(page)


def test_whole_journey_from_upload_to_downloaded_release(server, browser, tmp_path):
    page = open_page(browser, server)
    shoot(page, "1-data-sample")
    upload(page, tmp_path, "survey.csv", SURVEY)
    declare(page, "sex", "categorical", "F\nM")
    declare(page, "region", "categorical", "north\nsouth\neast\nwest")
    declare(page, "age", "numeric", "0, 18, 65, 120")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "survey.csv" in sidebar.inner_text()
    shoot(page, "1-data-upload")

    go(page, "2 · Tables")
    page.get_by_role("button", name="Every 1-way table of these").click()
    wait_idle(page)
    page.get_by_text("3 tables, 9 cells in all").wait_for()
    shoot(page, "2-tables")

    go(page, "3 · Budget")
    type_epsilon(page, "2")
    wait_idle(page)
    page.get_by_text("The whole release is ε = 2").wait_for()
    shoot(page, "3-budget")

    go(page, "4 · Preview")
    page.get_by_role("button", name="Draw a preview").click()
    wait_idle(page)
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    assert page.get_by_role("button", name="Download").count() == 0  # nothing leaves a preview
    shoot(page, "4-preview")

    go(page, "5 · Release")
    archive = create_and_download_release(page)
    names = set(archive.namelist())
    # sex and age are measured together as sex × age (a union: less noise for both under
    # pure DP, `strategy.merge`), region on its own
    measured = {"measurements/sex_by_age.csv", "measurements/region.csv"}
    assert {"metadata.json", "report.html", "tables/sex.csv", *measured} <= names
    metadata = json.loads(archive.read("metadata.json"))
    assert [t["name"] for t in metadata["tables"]] == ["sex", "region", "age"]
    assert metadata["total"]["epsilon"] <= 2
    assert archive.read("tables/region.csv").decode().splitlines()[0] == "region,count,moe"
    assert "west" in archive.read("tables/region.csv").decode()  # the domain, not the data
    assert "Spent ε\n\n2" in sidebar.inner_text().replace("\r", "")
    shoot(page, "5-release")


def test_two_sessions_never_see_each_others_data(server, browser, tmp_path):
    alice = open_page(browser, server)
    bob = open_page(browser, server)
    upload(alice, tmp_path, "alice_secret.csv", "colour\nred\nblue\n" * 50)
    reload_as_new_session(bob)
    assert "alice_secret.csv" not in bob.content()
    assert "census_sample.csv" in bob.locator('[data-testid="stSidebar"]').inner_text()
    upload(bob, tmp_path, "bob_private.csv", "shape\nsquare\ncircle\n" * 50)
    reload_as_new_session(alice)
    # a reload starts a new session: Alice's upload is gone, and Bob's never arrives
    assert "bob_private.csv" not in alice.content()
    assert "bob_private.csv" in bob.locator('[data-testid="stSidebar"]').inner_text()
    go(bob, "4 · Preview")
    assert "alice" not in bob.content().lower()


def test_a_file_over_the_upload_limit_is_refused_before_it_is_sent(server, browser, tmp_path):
    """The server's limit (config.toml: maxUploadSize = 200 MB) is checked by the uploader
    against the file's size before any byte is sent; the loaded data stays as it was."""
    over = tmp_path / "too_big.csv"
    with over.open("wb") as handle:
        handle.truncate(201 * 1024 * 1024)  # sparse: nothing is written, only the size counts
    page = open_page(browser, server)
    page.locator(file_input("data_upload")).set_input_files(str(over))
    page.locator(".st-key-data_upload").get_by_text("or smaller").wait_for()
    wait_idle(page)
    body = page.locator("body").inner_text()
    assert "File must be 200" in body
    assert "census_sample.csv (the bundled synthetic sample)" in body
    assert "Loaded too_big.csv" not in body
    page.context.close()
