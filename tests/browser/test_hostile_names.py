"""Issue 25.4 in a real browser: with hostile column names, codebook labels, record values
and file names (Markdown images and links, HTML tags pointing to another host), every page
is opened and used, and the browser asks no host but the dashboard's own for anything."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from helpers.browser import BROWSER_TEST, create_release, file_input, go, wait_idle
from helpers.hostile import FILE_NAME, HOST, PLAN_NAME, hostile_csv, hostile_plan
from ui.budget_tabs import TABS

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST
LOCAL = {"127.0.0.1", "localhost"}
# Streamlit's own fetch of the page icon (`page_icon=":material/lock:"` in app.py) as a
# favicon: fixed by the app, never by what a user typed.
FAVICON = "https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/lock/"


def test_no_page_makes_the_browser_fetch_a_planted_address(server, browser, tmp_path):
    data = tmp_path / FILE_NAME
    data.write_bytes(hostile_csv())
    plan = tmp_path / PLAN_NAME
    plan.write_bytes(hostile_plan())
    elsewhere: list[str] = []

    def only_local(route) -> None:  # record, then refuse, every request to another host
        host = urlparse(route.request.url).hostname
        if host is None or host in LOCAL or route.request.url.startswith(FAVICON):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.route("**/*", only_local)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(server)
    page.get_by_role("heading", name="1 · Data").wait_for()
    wait_idle(page)
    page.locator(file_input("data_upload")).set_input_files(str(data))
    page.get_by_text("4 columns.").first.wait_for()
    wait_idle(page)
    page.locator(file_input("plan_upload")).set_input_files(str(plan))
    page.get_by_text("— categorical").first.wait_for()  # the plan's columns
    wait_idle(page)
    page.locator('[data-testid="stExpander"] summary').first.click()  # a column's editor
    wait_idle(page)  # (closed ones are in the page too: a hidden image is fetched all the same)
    go(page, "2 · Tables")
    go(page, "3 · Budget")
    for tab in TABS:
        page.get_by_role("tab", name=tab).click()
        wait_idle(page)
    go(page, "4 · Preview")
    page.get_by_role("button", name="Draw a preview").click()
    wait_idle(page)
    go(page, "5 · Release")
    create_release(page)  # the report is drawn in the page
    go(page, "Local DP")
    page.get_by_text("A column of the plan").click()
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Risk (confidential)").click()
    page.get_by_role("heading", name="Risk", exact=True).wait_for()
    wait_idle(page)
    page.get_by_text("What does an attacker learn about one person?").click()
    wait_idle(page)
    page.wait_for_timeout(1000)  # images load after the page is drawn
    context.close()
    assert HOST in hostile_csv().decode()  # the plants were there to be fetched
    assert elsewhere == [], elsewhere
