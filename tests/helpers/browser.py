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
import weakref
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
    ledger: Path, on_start: Callable[[subprocess.Popen[bytes]], None] | None = None
) -> Iterator[str]:
    """Serve the dashboard on a free local port until the block ends; yields its URL.

    `on_start`, if given, receives the server process (e.g. to read its memory use)."""
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
        cwd=ROOT,
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
GRACE = 0.3  # s: the longest an action takes to send its request (a loaded machine)
QUIET = 0.3  # s without a message that count as idle (a run may ask for another)


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished the runs the last action asked for.

    A page with a `RunWatch` is read from its websocket: idle once every run asked for has
    ended (a run ended early for another, by `st.rerun` or a newer request, does not count)
    and nothing has arrived for `QUIET` seconds. Issue 25: waiting on the status widget cost
    half a second per step, since it fades out 200 ms after a run and then needs a pause to
    tell a finished run from a chained one."""
    watch = _WATCHES.get(page)
    if watch is not None:
        watch.wait_idle(timeout / 1000)
        return
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):  # no run started: nothing to wait for
        page.wait_for_selector(STATUS_WIDGET, state="attached", timeout=START)
    while True:  # a run may ask for another (st.rerun): idle is no widget for SETTLE ms
        page.wait_for_selector(STATUS_WIDGET, state="detached", timeout=timeout)
        page.wait_for_timeout(SETTLE)
        if page.locator(STATUS_WIDGET).count() == 0:
            return


_WATCHES: weakref.WeakKeyDictionary[Any, RunWatch] = weakref.WeakKeyDictionary()


class RunWatch:
    """The runs the server finished for one page, read from its websocket: the requests the
    browser sends (`rerun_script`; `file_urls_request` and the upload it announces) and the
    `new_session` and `script_finished` messages the server sends back. A fragment rerun
    shows no status widget; this sees it end all the same. Create it before `page.goto`
    (a reload's new socket is watched too); `wait_idle` then uses it."""

    def __init__(self, page) -> None:
        self.page = page
        self.statuses: list[str] = []  # each finished run's status, in order
        self.busy = False  # a run was asked for or is running, and has not ended
        self.requests = 0  # requests sent so far
        self.requests_waited = 0  # requests sent when `wait_idle` last returned
        self.uploads = 0  # files on their way to the server (asked for, not yet sent)
        self.last_message = self.last_upload = time.monotonic()
        page.on("websocket", self._watch)
        page.on("requestfinished", self._upload_ended)
        page.on("requestfailed", self._upload_ended)
        _WATCHES[page] = self

    def _upload_ended(self, request) -> None:
        if "/_stcore/upload_file" in request.url and self.uploads:
            self.uploads -= 1
            self.last_upload = time.monotonic()

    def _watch(self, socket) -> None:
        socket.on("framesent", self._sent)
        socket.on("framereceived", self._received)

    def _sent(self, payload: str | bytes) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if isinstance(payload, str):
            return
        message = BackMsg()
        message.ParseFromString(payload)
        kind = message.WhichOneof("type")
        if kind == "file_urls_request":  # a file is sent next; its run (if any) after that
            self.uploads += len(message.file_urls_request.file_names)
        if kind == "rerun_script":
            self.busy = True
        if kind in ("rerun_script", "file_urls_request"):
            self.requests += 1
            self.last_message = time.monotonic()

    def _received(self, payload: str | bytes) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        message = ForwardMsg()
        message.ParseFromString(payload)
        self.last_message = time.monotonic()
        kind = message.WhichOneof("type")
        if kind == "new_session":  # a run started (perhaps one asked for by the last run)
            self.busy = True
        elif kind == "script_finished":
            status = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
            self.statuses.append(status)
            self.busy = status == "FINISHED_EARLY_FOR_RERUN"  # another run follows

    def wait_idle(self, timeout: float) -> None:
        """Wait until every run asked for has ended; if the action asked for none yet, give
        it `GRACE` seconds to do so."""
        start = time.monotonic()
        asked = self.requests > self.requests_waited
        while True:
            now = time.monotonic()
            settled = (
                not self.busy
                and not self.uploads
                and now - self.last_message >= QUIET
                and now - self.last_upload >= GRACE  # an upload's run is asked for after it
            )
            if settled and (asked or now - start >= GRACE):
                self.requests_waited = self.requests
                return
            if now - start > timeout:
                raise TimeoutError("the server did not finish its runs in time")
            self.page.wait_for_timeout(10)  # Playwright delivers the frames while it waits

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
