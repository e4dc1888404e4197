"""Load benchmark of the dashboard (not a test): concurrent browser sessions on one server.

One real `streamlit run app.py` server and Debian's Chromium (Playwright's async API, one
browser, one context per session). Each session uploads a synthetic CSV, loads the bundled
sample plan, opens the Preview page and draws a preview. Prints per-session latencies
(median / max) and the server's peak resident memory (VmHWM). Then, on a fresh server, one
session uploads one large file and the peak memory is printed again.

    python bench/bench_sessions.py [--sessions 10] [--rows 100000] [--large-mb 150]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.async_api import Page, async_playwright  # noqa: E402
from playwright.async_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from dprelease.sample import write_sample  # noqa: E402
from tests.browser import CHROMIUM_FLAGS, chromium_path, file_input, streamlit_server  # noqa: E402

PLAN = ROOT / "data" / "census_sample.plan.yaml"
TIMEOUT = 180_000


def vm_hwm_mb(pid: int) -> float:
    """Peak resident set size of a process, in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


async def wait_idle(page: Page) -> None:
    await page.wait_for_timeout(300)
    await page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=TIMEOUT
    )
    await page.wait_for_timeout(200)


async def open_session(browser, url: str) -> Page:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT)
    await page.goto(url)
    await page.get_by_role("heading", name="1 · Data").wait_for()
    await wait_idle(page)
    return page


async def upload(page: Page, data: Path) -> float:
    start = time.perf_counter()
    # The data caption persists across reruns (the "Loaded" flash shows once only).
    await attach(page, "data_upload", data, f"{data.name} (your upload)")
    return time.perf_counter() - start


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


async def attach(page: Page, key: str, path: Path, done: str, tries: int = 3) -> None:
    """Put a file in an uploader and wait until the page says `done`. Under load a rerun can
    re-render the uploader while its file is still in flight, and the file is lost: set it
    again (a new file id, so the page takes it as a new upload)."""
    for attempt in range(tries):
        await page.locator(file_input(key)).set_input_files(str(path))
        try:
            await page_says(page, done, timeout=60_000 if attempt < tries - 1 else TIMEOUT)
            return
        except PlaywrightTimeout:
            continue


async def session(browser, url: str, data: Path) -> tuple[float, float]:
    page = await open_session(browser, url)
    async with step(page, "upload"):
        upload_s = await upload(page, data)
        await wait_idle(page)
    async with step(page, "plan"):
        await attach(page, "plan_upload", PLAN, f"Loaded the plan from {PLAN.name}")
        await wait_idle(page)
    async with step(page, "preview"):
        await page.locator('[data-testid="stSidebarNav"]').get_by_text("4 · Preview").click()
        await page.get_by_role("heading", name="4 · Preview").wait_for()
        await wait_idle(page)
        start = time.perf_counter()
        await page.get_by_role("button", name="Draw a preview").click()
        await page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
        preview_s = time.perf_counter() - start
    await page.context.close()
    return upload_s, preview_s


async def run_sessions(url: str, data: Path, sessions: int) -> list[tuple[float, float]]:
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            return list(
                await asyncio.gather(*(session(browser, url, data) for _ in range(sessions)))
            )
        finally:
            await browser.close()


async def run_large(url: str, data: Path) -> float:
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            page = await open_session(browser, url)
            return await upload(page, data)
        finally:
            await browser.close()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far, in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--large-mb", type=int, default=150, help="0 to skip the large upload")
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("needs Debian's chromium")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / f"sample_{args.rows}.csv"
        write_sample(data, args.rows, seed=1)
        servers: list[subprocess.Popen[bytes]] = []
        with streamlit_server(folder / "ledger.sqlite", on_start=servers.append) as url:
            idle_mb = vm_hwm_mb(servers[-1].pid)
            cpu_before = cpu_seconds(servers[-1].pid)
            start = time.perf_counter()
            timings = asyncio.run(run_sessions(url, data, args.sessions))
            wall = time.perf_counter() - start
            server_cpu = cpu_seconds(servers[-1].pid) - cpu_before
            peak_mb = vm_hwm_mb(servers[-1].pid)
        uploads = [t[0] for t in timings]
        previews = [t[1] for t in timings]
        size_mb = data.stat().st_size / 1e6
        print(
            f"{args.sessions} sessions, {args.rows:,} rows ({size_mb:.1f} MB) each, "
            f"{wall:.1f} s wall, server CPU {server_cpu:.1f} s"
        )
        print(f"{'':24}{'median s':>10}{'max s':>10}")
        print(f"{'upload until Loaded':24}{statistics.median(uploads):>10.2f}{max(uploads):>10.2f}")
        print(f"{'draw a preview':24}{statistics.median(previews):>10.2f}{max(previews):>10.2f}")
        print(f"server peak RSS: {idle_mb:.0f} MB at start, {peak_mb:.0f} MB after the sessions")

        if args.large_mb:
            rows_per_mb = args.rows / size_mb
            large = folder / f"large_{args.large_mb}mb.csv"
            write_sample(large, int(rows_per_mb * args.large_mb), seed=2)
            large_mb = large.stat().st_size / 1e6
            with streamlit_server(folder / "ledger2.sqlite", on_start=servers.append) as url:
                idle_mb = vm_hwm_mb(servers[-1].pid)
                seconds = asyncio.run(run_large(url, large))
                peak_mb = vm_hwm_mb(servers[-1].pid)
            print(
                f"one {large_mb:.0f} MB upload: {seconds:.1f} s until Loaded; server peak RSS "
                f"{idle_mb:.0f} MB at start, {peak_mb:.0f} MB after"
            )


if __name__ == "__main__":
    main()
