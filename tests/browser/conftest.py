"""The browser tests' server and browser: one `streamlit run app.py` per test module, with its
own ledger (and so its own plan store beside it), and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import pytest

from helpers.browser import CHROMIUM_FLAGS, chromium_path, streamlit_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    ledger = tmp_path_factory.mktemp("ledger") / "ledger.sqlite"
    with streamlit_server(ledger) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    if chromium_path() is None:
        pytest.skip("needs Debian's chromium package")
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def close_contexts(request):
    """Each test's browser contexts are closed when it ends: the module's Chromium would
    otherwise keep every earlier test's pages and their renderers (issue 25: 1.2 GB of
    Chromium at the suite's peak)."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()
