"""Issue 24's statistician, in a real browser (Debian's Chromium, Playwright, `streamlit run`),
on the bundled sample: label the state codes from a public codebook (leading zeros kept), add
a median income by state beside the census tables, set the budget, make the tables consistent
(county → state), preview, release, download the zip, and see the ledger refuse a release over
the lifetime cap. Done when it completes without an error, a lost label or a non-additive
table.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from helpers.browser import (
    BROWSER_TEST,
    CHROMIUM_FLAGS,
    chromium_path,
    create_and_download_release,
    go,
    import_codebook,
    rows_of,
    streamlit_server,
    type_epsilon,
    wait_idle,
)
from helpers.office import FIPS_STATES, state_codebook_csv

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST
MEDIAN = "quantile_income_by_state"  # the name the Tables page gives the statistic below


def no_error(page, step: str) -> None:
    """Neither an exception nor an st.error on the page."""
    shown = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
    assert shown.count() == 0, (step, shown.all_inner_texts())


def add_median_income_by_state(page) -> None:
    form = page.locator(".st-key-new_stat_by")
    form.locator("input").click()
    form.locator("input").fill("state")
    form.locator("input").press("Enter")
    page.keyboard.press("Escape")
    page.locator(".st-key-new_stat_column input").fill("income")
    page.locator(".st-key-new_stat_hi input").fill("500000")
    page.locator(".st-key-new_stat_quantiles input").fill("0.5")
    page.get_by_role("button", name="Add statistic").click()
    wait_idle(page)


def test_the_statisticians_task_from_codebook_to_capped_ledger(tmp_path):
    (tmp_path / "states.csv").write_text(state_codebook_csv(), encoding="utf-8")
    with (
        streamlit_server(tmp_path / "ledger.sqlite") as url,
        playwright_api.sync_playwright() as driver,
    ):
        chromium = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("heading", name="1 · Data").wait_for()
        wait_idle(page)

        import_codebook(page, "state", tmp_path / "states.csv")
        page.get_by_text("state — categorical, 51 values, 51 labelled").wait_for()
        no_error(page, "codebook")

        go(page, "2 · Tables")
        add_median_income_by_state(page)
        no_error(page, "statistic")

        go(page, "3 · Budget")
        type_epsilon(page, "2")
        wait_idle(page)
        no_error(page, "budget")

        go(page, "4 · Preview")
        page.get_by_text("Consistent tables").click()  # the sample plan has it off
        wait_idle(page)
        page.get_by_role("button", name="Draw a preview").click()
        wait_idle(page)
        page.get_by_text("PREVIEW noise (numpy), not a release").wait_for()
        no_error(page, "preview")

        go(page, "5 · Release")
        archive = create_and_download_release(page)
        no_error(page, "release")
        cap = page.locator(".st-key-cap_input input")
        cap.fill("2.5")  # ε = 2 spent; with the next one the two compose to ε ≈ 2.9 (Rényi)
        cap.press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Set cap").click()
        wait_idle(page)
        page.get_by_role("button", name="Prepare another release").click()
        wait_idle(page)
        page.get_by_role("button", name="Yes, prepare another").click()
        wait_idle(page)
        page.get_by_text("raise the cap").wait_for()
        assert page.get_by_role("button", name="Create release").is_disabled()
        chromium.close()

    metadata = json.loads(archive.read("metadata.json"))
    assert metadata["postprocess"]["consistent"] is True
    assert metadata["total"]["epsilon"] <= 2
    counts = {t["name"]: rows_of(archive, t["file"]) for t in metadata["tables"] if "stat" not in t}
    assert {"total", "state", "county", "county_by_sex"} <= set(counts)
    (total,) = [int(row[-2]) for row in counts["total"][1:]]
    for name, rows in counts.items():
        head = rows[0]
        assert head[-2:] == ["count", "moe"], name
        if "state" in head:  # no lost label
            assert head[head.index("state") + 1] == "state_label", name
            at = head.index("state")
            assert all(row[at + 1] == FIPS_STATES[row[at]] for row in rows[1:]), name
        assert sum(int(row[-2]) for row in rows[1:]) == total, name  # additive
    by_state: dict[str, int] = defaultdict(int)
    for row in counts["county"][1:]:
        by_state[row[0][:2]] += int(row[-2])  # county → state through its FIPS prefix
    assert by_state == {row[0]: int(row[-2]) for row in counts["state"][1:]}

    median = rows_of(archive, f"tables/{MEDIAN}.csv")
    assert [row[0] for row in median[1:]] == list(FIPS_STATES)
    assert median[0] == ["state", "state_label", "value", "moe"]  # the bug was ["state", "value"]
