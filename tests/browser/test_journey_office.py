"""Issues 24 and 37's statistician, in a real browser (Debian's Chromium, Playwright,
`streamlit run`), on the bundled sample: declare the state codes and the tenure labels from a
whole published data dictionary in one step (leading zeros kept), add a median income by state
and a survey-weighted table beside the census tables, set the budget, see the reconstruction
attack say that it attacked nothing when no area is small enough, make the tables consistent
(county → state), preview, see the release confirmation asked again after a reload, release,
download the zip, and see the ledger refuse a release over the lifetime cap. Done when it
completes without an error, a lost label or a non-additive count table.
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
    file_input,
    go,
    rows_of,
    streamlit_server,
    type_epsilon,
    wait_idle,
)
from helpers.office import FIPS_STATES

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST
MEDIAN = "quantile_income_by_state"  # the name the Tables page gives the statistic below
TENURE = {"Owner": "Owner-occupied", "Renter": "Rented"}
DICTIONARY = {  # a published codebook: every column it declares, at once
    "state": {"description": "State (FIPS code)", "values": FIPS_STATES},
    "tenure": {"description": "Tenure of the household", "values": TENURE},
}
CONSENT = "I understand that this spends"


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


def import_dictionary(page, path) -> None:
    """On the Data page: read the whole dictionary, see what it sets, apply it in one click."""
    page.get_by_text("Import a whole data dictionary").click()
    page.locator(file_input("dictionary_upload")).set_input_files(str(path))
    apply = page.get_by_role("button", name="Apply to 2 column(s): state, tenure")
    apply.wait_for()
    section = page.locator('[data-testid="stExpander"]').filter(has_text="whole data dictionary")
    # what it sets, before it sets it
    playwright_api.expect(section.locator('[data-testid="stDataFrame"]')).to_have_count(1)
    apply.click()
    wait_idle(page)


def weigh_table(page, table: str, column: str, bound: str) -> None:
    """On the Tables page: the table's cells become totals of `column`, clamped to [0, bound]."""
    for key, value in (("weight_table", table), ("weight_column", column)):
        select = page.locator(f".st-key-{key} input")
        select.click()
        select.fill(value)
        select.press("Enter")
    page.locator(".st-key-weight_bound input").fill(bound)
    page.get_by_role("button", name="Set survey weight").click()
    wait_idle(page)


def attack_nothing(page) -> None:
    """On the Risk page: states are all above the largest area, so nothing is attacked."""
    for key, value in (("risk_level", "state"), ("risk_max_people", "50")):
        box = page.locator(f".st-key-{key} input")
        box.click()
        box.fill(value)
        box.press("Enter")
        wait_idle(page)
    page.get_by_role("button", name="Run the attack").click()
    page.get_by_text("Nothing was attacked").wait_for()
    assert "0.0%" not in page.locator('[data-testid="stMain"]').inner_text()  # no rates shown


def consent_box(page):
    return page.get_by_role("checkbox", name=CONSENT)


def consent_is_asked_again_after_a_reload(page) -> None:
    """On the Release page: a confirmation ticked, then the page reloaded and the plan resumed:
    the box is empty again (a consent is given for one release, in one session)."""
    page.get_by_text(CONSENT).click()
    playwright_api.expect(consent_box(page)).to_be_checked()
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page?": the plan is unreleased
    page.reload()
    page.get_by_text("Resume your plan from").wait_for()
    page.locator(".st-key-resume_plan").get_by_role("button").click()
    page.get_by_role("heading", name="5 · Release").wait_for()
    wait_idle(page)
    playwright_api.expect(consent_box(page)).not_to_be_checked()


def test_the_statisticians_task_from_codebook_to_capped_ledger(tmp_path):
    dictionary = tmp_path / "dictionary.json"
    dictionary.write_text(json.dumps(DICTIONARY), encoding="utf-8")
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

        import_dictionary(page, dictionary)
        page.get_by_text("state — categorical, 51 values, 51 labelled").wait_for()
        page.get_by_text("tenure — categorical, 2 values, 2 labelled").wait_for()
        no_error(page, "dictionary")

        go(page, "2 · Tables")
        add_median_income_by_state(page)
        weigh_table(page, "tenure", "age", "100")
        no_error(page, "statistic and weight")

        go(page, "3 · Budget")
        type_epsilon(page, "2")  # a fragment run shows no status widget: wait for the total
        page.get_by_text("The whole release is ε = 2").wait_for()
        no_error(page, "budget")

        page.locator('[data-testid="stSidebarNav"]').get_by_text("Risk (confidential)").click()
        page.get_by_role("heading", name="Risk", exact=True).wait_for()
        wait_idle(page)
        attack_nothing(page)

        go(page, "4 · Preview")
        page.get_by_text("Consistent tables").click()  # the sample plan has it off
        wait_idle(page)
        page.get_by_role("button", name="Draw a preview").click()
        wait_idle(page)
        page.get_by_text("PREVIEW noise (numpy), not a release").wait_for()
        no_error(page, "preview")

        go(page, "5 · Release")
        consent_is_asked_again_after_a_reload(page)
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
    weighted = {t["name"]: t["survey_weight"] for t in metadata["tables"] if "survey_weight" in t}
    assert list(weighted) == ["tenure"] and weighted["tenure"]["column"] == "age"
    tenure = counts.pop("tenure")  # weighted totals of age: labelled as counts are
    assert tenure[0][:2] == ["tenure", "tenure_label"]
    assert {(row[0], row[1]) for row in tenure[1:]} == set(TENURE.items())
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
