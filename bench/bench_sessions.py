"""Load benchmark of the dashboard (not a test): concurrent browser sessions on one server.

One real `streamlit run app.py` server and Debian's Chromium (Playwright's async API, one
browser, one context per session). Each session uploads a synthetic CSV, loads the bundled
sample plan, opens the Preview page and draws a preview. Meanwhile one more session, on the
bundled sample, switches between two pages and times each switch: that is what "the app stays
responsive" means to a user who is not the one uploading. Prints latencies (median / max), the
CPU time of the server and of Chromium (they share the machine's cores, so the browsers' work
lengthens the latencies too), and the server's peak resident memory (VmHWM). Then, on a fresh
server, one session uploads the largest file the upload limit allows; the peak memory is
printed, and again what the server still holds after that session has gone.

    python bench/bench_sessions.py [--sessions 10] [--rows 100000] [--large-mb 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.async_api import Browser, Page, async_playwright  # noqa: E402
from playwright.async_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from dprelease.sample.generator import write_sample  # noqa: E402
from helpers.browser import CHROMIUM_FLAGS, chromium_path, file_input, streamlit_server  # noqa: E402

PLAN = ROOT / "data" / "census_sample.plan.yaml"
TIMEOUT = 180_000


async def wait_idle(page: Page) -> None:
    await page.wait_for_timeout(300)
    await page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=TIMEOUT
    )
    await page.wait_for_timeout(200)


async def open_session(browser: Browser, url: str) -> Page:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT)
    await page.goto(url)
    await page.get_by_role("heading", name="1 · Data").wait_for()
    await wait_idle(page)
    return page


async def upload(page: Page, data: Path) -> tuple[float, int]:
    """Upload a data file: seconds until the page shows it, and how often it was set again."""
    start = time.perf_counter()
    # The data caption persists across reruns (the "Loaded" flash shows once only).
    retries = await attach(page, "data_upload", data, f"{data.name} (your upload)")
    return time.perf_counter() - start, retries


class StepFailed(RuntimeError):
    pass


@asynccontextmanager
async def step(page: Page, name: str) -> AsyncIterator[None]:
    """Name the step a session is in, and keep a screenshot if it fails."""
    try:
        yield
    except Exception as error:
        shot = Path(tempfile.gettempdir()) / f"bench_sessions_{id(page)}_{name}.png"
        await page.screenshot(path=str(shot), full_page=True)
        raise StepFailed(f"{name} failed ({type(error).__name__}); screenshot {shot}") from error


async def page_says(page: Page, text: str, timeout: float = TIMEOUT) -> None:
    await page.wait_for_function(
        "text => document.body.innerText.includes(text)", arg=text, timeout=timeout
    )


async def attach(page: Page, key: str, path: Path, done: str, tries: int = 3) -> int:
    """Put a file in an uploader and wait until the page says `done`; returns the retries.

    Under load a rerun can re-render the uploader while its file is still in flight, and the
    file is lost: set it again (a new file id, so the page takes it as a new upload)."""
    for attempt in range(tries):
        await page.locator(file_input(key)).set_input_files(str(path))
        try:
            await page_says(page, done, timeout=60_000 if attempt < tries - 1 else TIMEOUT)
            return attempt
        except PlaywrightTimeout:
            continue
    raise AssertionError("unreachable: the last attempt raises")


@dataclass
class SessionTimes:
    upload_s: float
    preview_s: float
    retries: int


async def session(browser: Browser, url: str, data: Path) -> SessionTimes:
    page = await open_session(browser, url)
    async with step(page, "upload"):
        upload_s, retries = await upload(page, data)
        await wait_idle(page)
    async with step(page, "plan"):
        retries += await attach(page, "plan_upload", PLAN, f"Loaded the plan from {PLAN.name}")
        await wait_idle(page)
    async with step(page, "preview"):
        await switch_page(page, "4 · Preview")
        await wait_idle(page)
        start = time.perf_counter()
        await page.get_by_role("button", name="Draw a preview").click()
        await page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
        preview_s = time.perf_counter() - start
    await page.context.close()
    return SessionTimes(upload_s, preview_s, retries)


async def switch_page(page: Page, name: str) -> float:
    """Click a page in the sidebar; seconds until its heading shows."""
    start = time.perf_counter()
    await page.locator('[data-testid="stSidebarNav"]').get_by_text(name).click()
    await page.get_by_role("heading", name=name).wait_for()
    return time.perf_counter() - start


async def probe(page: Page, stop: asyncio.Event | None = None, switches: int = 0) -> list[float]:
    """Switch between two light pages, `switches` times or until `stop` is set."""
    latencies: list[float] = []
    names = ("2 · Tables", "3 · Budget")
    while (stop is not None and not stop.is_set()) or len(latencies) < switches:
        latencies.append(await switch_page(page, names[len(latencies) % 2]))
        await wait_idle(page)
    return latencies


@dataclass
class LoadRun:
    sessions: list[SessionTimes]
    idle_switches: list[float]
    loaded_switches: list[float]
    chromium_cpu_s: float


async def run_sessions(url: str, data: Path, sessions: int) -> LoadRun:
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            watcher = await open_session(browser, url)
            idle = await probe(watcher, switches=6)
            stop = asyncio.Event()
            probing = asyncio.create_task(probe(watcher, stop))
            times = await asyncio.gather(*(session(browser, url, data) for _ in range(sessions)))
            stop.set()
            loaded = await probing
            return LoadRun(list(times), idle, loaded, chromium_cpu_seconds())
        finally:
            await browser.close()


async def run_large(url: str, data: Path) -> float:
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            page = await open_session(browser, url)
            seconds, _ = await upload(page, data)
            return seconds
        finally:
            await browser.close()


def proc_status_mb(pid: int, field: str) -> float:
    """A memory figure of a process from /proc (VmHWM: peak resident, VmRSS: resident now)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far, in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chromium_cpu_seconds() -> float:
    """CPU time of every running Chromium process (on a bench machine: the ones we started)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            if "(chromium)" in stat.read_text():
                total += cpu_seconds(int(stat.parent.name))
    return total


def row(label: str, values: list[float]) -> str:
    return f"{label:34}{statistics.median(values):>10.2f}{max(values):>10.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--large-mb", type=int, default=200, help="0 to skip the large upload")
    parser.add_argument(
        "--settle", type=int, default=45, help="seconds to wait before reading memory again"
    )
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("needs Debian's chromium")
    # Let the server drop a closed session's state soon (the default keeps it 120 s).
    os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"] = "5"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / f"sample_{args.rows}.csv"
        write_sample(data, args.rows, seed=1)
        servers: list[subprocess.Popen[bytes]] = []
        with streamlit_server(folder / "ledger.sqlite", on_start=servers.append) as url:
            pid = servers[-1].pid
            idle_mb = proc_status_mb(pid, "VmHWM")
            cpu_before = cpu_seconds(pid)
            start = time.perf_counter()
            run = asyncio.run(run_sessions(url, data, args.sessions))
            wall = time.perf_counter() - start
            server_cpu = cpu_seconds(pid) - cpu_before
            peak_mb = proc_status_mb(pid, "VmHWM")
        size_mb = data.stat().st_size / 1e6
        print(
            f"{args.sessions} sessions, {args.rows:,} rows ({size_mb:.1f} MB) each, "
            f"{wall:.1f} s wall; CPU: server {server_cpu:.1f} s, Chromium "
            f"{run.chromium_cpu_s:.1f} s (on {os.cpu_count()} cores)"
        )
        print(f"{'':34}{'median s':>10}{'max s':>10}")
        print(row("upload until loaded", [t.upload_s for t in run.sessions]))
        print(row("draw a preview", [t.preview_s for t in run.sessions]))
        print(row("page switch, idle server", run.idle_switches))
        print(
            row(f"page switch, during the load ({len(run.loaded_switches)})", run.loaded_switches)
        )
        print(f"files set again after a rerun lost them: {sum(t.retries for t in run.sessions)}")
        print(f"server peak RSS: {idle_mb:.0f} MB at start, {peak_mb:.0f} MB after the sessions")

        if args.large_mb:
            rows_per_mb = args.rows / size_mb
            large = folder / f"large_{args.large_mb}mb.csv"
            write_sample(large, int(rows_per_mb * args.large_mb * 0.98), seed=2)
            large_mb = large.stat().st_size / 1e6
            with streamlit_server(folder / "ledger2.sqlite", on_start=servers.append) as url:
                pid = servers[-1].pid
                idle_mb = proc_status_mb(pid, "VmRSS")
                seconds = asyncio.run(run_large(url, large))
                peak_mb = proc_status_mb(pid, "VmHWM")
                time.sleep(args.settle)
                after_mb = proc_status_mb(pid, "VmRSS")
            print(
                f"one {large_mb:.0f} MB upload: {seconds:.1f} s until loaded; server RSS "
                f"{idle_mb:.0f} MB before, peak {peak_mb:.0f} MB, {after_mb:.0f} MB "
                f"{args.settle} s after the session closed"
            )


if __name__ == "__main__":
    main()
