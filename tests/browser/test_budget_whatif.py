"""Issue 13's budget what-if in a real browser (Debian's Chromium, `streamlit run app.py`): an ε
typed on the Budget page reruns only the page's fragment, and what lives outside it still
follows the plan: the sidebar's total and allocated ε, the leave guard, and the plan kept on
the server for a reload. (The timing itself is measured by bench/bench_dashboard.py.)"""

from __future__ import annotations

import pytest

from helpers.browser import BROWSER_TEST, EPSILON_BOX, RunWatch, go, type_epsilon, wait_idle

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST


def sidebar_metrics(page) -> dict[str, str]:
    texts = page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').all_inner_texts()
    lines = [[part for part in text.split("\n") if part.strip()] for text in texts]
    return {parts[0]: parts[-1] for parts in lines}


def test_a_what_if_reruns_only_the_fragment_and_the_sidebar_guard_and_store_follow(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    runs = RunWatch(page)
    page.goto(server)
    page.get_by_role("heading", name="1 · Data").wait_for()
    wait_idle(page)
    before = len(runs.statuses)
    go(page, "3 · Budget")
    runs.wait_for_run(before)  # the page switch's full run has ended
    assert sidebar_metrics(page)["Total ε (plan)"] == "1"
    assert page.evaluate("window.dpreleaseUnreleased") is False  # the sample, untouched

    before = len(runs.statuses)
    type_epsilon(page, "2.5")
    page.get_by_text("The whole release is ε = 2.5").wait_for()
    runs.wait_for_run(before)
    assert runs.statuses[before:] == ["FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]  # app.py never ran
    meter = sidebar_metrics(page)
    assert meter["Total ε (plan)"] == "2.5" and meter["Allocated ε"] == "2.5"
    assert meter["Spent ε"] == "0" and meter["Left ε"] == "∞"  # the ledger's, kept as drawn
    assert page.evaluate("window.dpreleaseUnreleased") is True  # no longer the sample's plan

    before = len(runs.statuses)
    page.get_by_role("tab", name="Accountants").click()  # a lazy tab: the fragment again
    page.locator(".st-key-accountant_chart").wait_for()
    runs.wait_for_run(before)
    assert runs.statuses[before:] == ["FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]
    assert page.locator(".st-key-split_chart").count() == 0  # the closed tab is not sent
    assert sidebar_metrics(page)["Allocated ε"] == "2.5"  # still shown after a second rerun

    # the fragment kept the plan on the server: a reload asks first, then offers it back
    prompts: list[str] = []

    def on_dialog(dialog) -> None:
        prompts.append(dialog.type)
        dialog.accept()

    page.on("dialog", on_dialog)
    page.reload()
    page.get_by_text("Resume your plan from").wait_for()
    wait_idle(page)
    assert prompts == ["beforeunload"]
    page.locator(".st-key-resume_plan").get_by_role("button").click()
    wait_idle(page)
    go(page, "3 · Budget")
    playwright_api.expect(page.locator(EPSILON_BOX)).to_have_value("2.5")
    context.close()
