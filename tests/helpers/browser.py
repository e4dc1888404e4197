"""Helpers for the browser tests: a real `streamlit run app.py` server and Debian's Chromium
driven by Playwright (Playwright's own browser download does not work on our machines)."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


# every browser test module: `pytestmark = BROWSER_TEST`
BROWSER_TEST = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium_path() is None, reason="needs Debian's chromium package"),
]
STATES = ["01", "06", "08"]


def coded_census_csv(rows: int = 600, esr_codes: int = 3) -> str:
    """Census-style codes: STATE with leading zeros, SEX 1/2, ESR 1…`esr_codes` with 'N'
    (not applicable) on every fifth row."""
    lines = ["STATE,SEX,ESR"]
    for i in range(rows):
        esr = "N" if i % 5 == 0 else str(1 + i % 3 % esr_codes)
        lines.append(f"{STATES[i % 3]},{1 + i % 2},{esr}")
    return "\n".join(lines) + "\n"


EPSILON_BOX = 'input[aria-label="ε (exact)"]'  # the Budget page's exact ε


def type_epsilon(page, value: str) -> None:
    """Type a total ε into the Budget page's exact box and press Enter (a what-if)."""
    box = page.locator(EPSILON_BOX)
    box.fill(value)
    box.press("Enter")


def file_input(key: str) -> str:
    """The CSS selector of the file input of the uploader with this widget key. Never pick an
    uploader by position: while a page is still rendering, the first one found can be another."""
    return f'.st-key-{key} [data-testid="stFileUploaderDropzoneInput"]'


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def streamlit_server(
    ledger: Path,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
    root: Path = ROOT,
) -> Iterator[str]:
    """Serve the dashboard on a free local port until the block ends; yields its URL.

    `on_start`, if given, receives the server process (e.g. to read its memory use); `root`
    is the checkout served (a bench serves an earlier commit's copy beside this one)."""
    port = _free_port()
    env = {**os.environ, "DPRELEASE_LEDGER": str(ledger)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # never read: a full pipe would block the server
    )
    if on_start is not None:
        on_start(process)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Streamlit server did not start")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


STATUS_WIDGET = '[data-testid="stStatusWidget"]'
START = 300  # ms: the longest an action's run takes to show the status widget
SETTLE = 200  # ms without the widget that count as idle


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished the current run (its status widget is gone).

    The run an action asks for shows the status widget as soon as the browser sends it (and
    keeps it 200 ms after the run, as it fades); an action that asks for no run shows none, so
    the widget is awaited at most `START` ms rather than for a fixed pause (issue 25: the
    suite's fixed pauses were half a second per step)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):  # no run started: nothing to wait for
        page.wait_for_selector(STATUS_WIDGET, state="attached", timeout=START)
    while True:  # a run may ask for another (st.rerun): idle is no widget for SETTLE ms
        page.wait_for_selector(STATUS_WIDGET, state="detached", timeout=timeout)
        page.wait_for_timeout(SETTLE)
        if page.locator(STATUS_WIDGET).count() == 0:
            return


class RunWatch:
    """The runs the server finished for one page, read from its websocket (`script_finished`
    messages): a full run, or a fragment's. A fragment rerun shows no status widget, so
    `wait_idle` cannot see it end; `wait_for_run` can. Create it before `page.goto`."""

    def __init__(self, page) -> None:
        self.page = page
        self.statuses: list[str] = []  # each finished run's status, in order
        page.on("websocket", lambda socket: socket.on("framereceived", self._frame))

    def _frame(self, payload: str | bytes) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        message = ForwardMsg()
        message.ParseFromString(payload)
        if message.WhichOneof("type") == "script_finished":
            self.statuses.append(ForwardMsg.ScriptFinishedStatus.Name(message.script_finished))

    def wait_for_run(self, after: int, timeout: float = 60) -> str:
        """Wait until more than `after` runs have finished; the status of run number `after`."""
        deadline = time.monotonic() + timeout
        while len(self.statuses) <= after:
            if time.monotonic() > deadline:
                raise TimeoutError("the server finished no run in time")
            self.page.wait_for_timeout(10)  # Playwright delivers the frames while it waits
        return self.statuses[after]


def go(page, title: str) -> None:
    """Switch page with the sidebar's navigation and wait for the page to be drawn."""
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title).click()
    page.get_by_role("heading", name=title).wait_for()
    wait_idle(page)


def create_and_download_release(page) -> zipfile.ZipFile:
    """On the Release page: confirm, create, and download the zip (opened)."""
    return zipfile.ZipFile(io.BytesIO(create_release(page)))


def column_expander(page, name: str):
    """The Data page's expander of column `name`."""
    return page.locator('[data-testid="stExpander"]').filter(has_text=f"{name} —")


def choose_kind(page, name: str, kind: str) -> None:
    """Open column `name` on the Data page and set its kind (categorical, numeric, ignore)."""
    column_expander(page, name).get_by_text(f"{name} —").click()
    wait_idle(page)
    select = column_expander(page, name).locator('[data-testid="stSelectbox"] input').first
    select.click()
    select.fill(kind)
    select.press("Enter")
    wait_idle(page)


def import_codebook(page, name: str, path: Path) -> None:
    """On the Data page: make column `name` categorical from the codebook CSV at `path`."""
    choose_kind(page, name, "categorical")
    box = column_expander(page, name)
    box.locator(f'[class*="st-key-codebook_{name}_"] input[type="file"]').set_input_files(str(path))
    wait_idle(page)
    box.get_by_role("button", name="Apply domain").click()
    wait_idle(page)


def rows_of(archive: zipfile.ZipFile, name: str) -> list[list[str]]:
    """The rows of a CSV file in a release's zip."""
    return list(csv.reader(io.StringIO(archive.read(name).decode())))


def create_release(page) -> bytes:
    """On the Release page: confirm, create, and download the zip; returns its bytes."""
    page.get_by_text("I understand that this spends").click()
    wait_idle(page)
    page.get_by_role("button", name="Create release").click()
    page.get_by_text("Release made and charged once").wait_for(timeout=120_000)
    wait_idle(page)
    return download(page, "Download the release (zip)")


def download(page, button: str) -> bytes:
    """Click the download button with this label; returns the file's bytes."""
    with page.expect_download() as started:
        page.get_by_role("button", name=button).click()
    return Path(started.value.path()).read_bytes()


SCREENSHOTS = ROOT / "docs" / "screenshots"


def shoot(page, name: str) -> None:
    """Refresh the README's screenshots, only when asked (DPRELEASE_SCREENSHOTS=1): otherwise
    every test run would leave a checkout with modified pictures."""
    if os.environ.get("DPRELEASE_SCREENSHOTS") != "1":
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
