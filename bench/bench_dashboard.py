"""Benchmark of the dashboard as a user feels it (not a test): a real `streamlit run app.py`
server and Debian's Chromium (Playwright). Prints medians of several runs:

- page switch: a click in the sidebar until the new page's heading is on screen;
- budget what-if: ε typed into the Budget page's exact box (Enter) until the page shows the
  new total (the table set is known, no data are read), and until the server has finished the
  run (the page's fragment: the table, the open tab, the sidebar's figures, the plan kept);
  once with totals not tried before, once going back to totals tried a moment ago;
- upload: a 27,000-row census-style file (codes with leading zeros, 'N' values) chosen in the
  uploader until the page says it was loaded and parsed.

Each time runs from Playwright's call to the condition seen in the page (polled every
animation frame), so it includes the browser's round trip to the server and back.

    python bench/bench_dashboard.py [--runs 7] [--rows 27000]

It prints the load average before and after: the machine is shared, and the figures move with
it.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from helpers.browser import (  # noqa: E402
    CHROMIUM_FLAGS,
    RunWatch,
    chromium_path,
    file_input,
    streamlit_server,
    wait_idle,
)

PAGES = ["2 · Tables", "3 · Budget", "4 · Preview", "5 · Release", "1 · Data"]


def census_csv(rows: int, path: Path) -> Path:
    """Synthetic persons with census codes (no real data): STATE, PUMA, SEX, AGEP, RAC1P, ESR."""
    pick = random.Random(2026)
    states = [f"{s:02d}" for s in range(1, 57)]
    lines = ["STATE,PUMA,SEX,AGEP,RAC1P,ESR,HINCP"]
    for _ in range(rows):
        esr = "N" if pick.random() < 0.2 else str(pick.randint(1, 6))
        lines.append(
            f"{pick.choice(states)},{pick.randint(100, 3200):05d},{pick.randint(1, 2)},"
            f"{pick.randint(0, 95)},{pick.randint(1, 9)},{esr},{pick.randint(0, 250_000)}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def timed(page: Page, action: Callable[[], None], condition: str, arg: object = None) -> float:
    """Seconds from `action` until the JavaScript `condition(arg)` holds in the page."""
    start = time.perf_counter()
    action()
    page.wait_for_function(condition, arg=arg, polling="raf", timeout=120_000)
    return time.perf_counter() - start


HEADING = "(title) => [...document.querySelectorAll('h1')].some(h => h.innerText.trim() === title)"
TEXT = "(text) => document.body.innerText.includes(text)"
# the total exactly: "ε = 2" must not match "ε = 2.1" (the next character is no digit or point)
TOTAL = (
    "(value) => new RegExp('release is ε = ' + value.replace('.', '\\\\.') + '(?![0-9.])')"
    ".test(document.body.innerText)"
)


def page_switches(page: Page, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        for title in PAGES:
            link = page.locator('[data-testid="stSidebarNav"]').get_by_text(title)
            times.append(timed(page, link.click, HEADING, title))
            wait_idle(page)
    return times


# In the page itself: when Enter went down, and when the DOM first held the awaited text (a
# MutationObserver), without Playwright's own round trips.
IN_PAGE = """
window.benchTimes = {enter: null, shown: null, want: null};
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') window.benchTimes.enter = performance.now();
}, true);
new MutationObserver(() => {
  const t = window.benchTimes;
  if (t.want && t.shown === null && t.want.test(document.body.innerText)) {
    t.shown = performance.now();
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
EXPECT = (
    "(value) => Object.assign(window.benchTimes, {enter: null, shown: null, want: new RegExp("
    "'release is ε = ' + value.replace('.', '\\\\.') + '(?![0-9.])')})"
)


def what_ifs(page: Page, runs: RunWatch, values: list[str]) -> dict[str, list[float]]:
    """Each ε in turn: seconds until the new total is on screen (as Playwright sees it, and
    inside the page from the key to the DOM), and until the run has ended (a fragment rerun
    shows no status widget: its end is read from the websocket)."""
    box = page.locator('input[aria-label="ε (exact)"]')
    times: dict[str, list[float]] = {"shown": [], "in page": [], "ended": []}
    for value in values:
        box.fill(value)
        page.evaluate(EXPECT, value)
        before = len(runs.statuses)
        start = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(TOTAL, arg=value, polling="raf", timeout=120_000)
        times["shown"].append(time.perf_counter() - start)
        runs.wait_for_run(before, timeout=120)
        times["ended"].append(time.perf_counter() - start)
        page.wait_for_function("() => window.benchTimes.shown !== null")
        inside = page.evaluate("() => window.benchTimes.shown - window.benchTimes.enter")
        times["in page"].append(inside / 1000)
        page.wait_for_timeout(300)
    return times


def uploads(page: Page, data: Path, runs: int) -> list[float]:
    times = []
    for run in range(runs):
        name = data.with_name(f"persons_{run}.csv")
        name.write_bytes(data.read_bytes())  # a new file each time, so it is parsed again
        chooser = page.locator(file_input("data_upload"))
        choose = functools.partial(chooser.set_input_files, str(name))
        times.append(timed(page, choose, TEXT, f"Loaded {name.name}"))
        wait_idle(page)
    return times


def line(what: str, times: list[float], target: float) -> str:
    median = statistics.median(times)
    return (
        f"{what:<38} median {median * 1000:7.0f} ms   min {min(times) * 1000:6.0f}   "
        f"max {max(times) * 1000:6.0f}   n={len(times)}   target < {target * 1000:.0f} ms "
        f"({'met' if median < target else 'NOT met'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rows", type=int, default=27_000)
    args = parser.parse_args()
    load_before = f"{os.getloadavg()[0]:.2f}"
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as driver:
        tmp = Path(folder)
        data = census_csv(args.rows, tmp / "persons.csv")
        size = data.stat().st_size
        with streamlit_server(tmp / "ledger.sqlite") as url:
            browser = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(120_000)
            runs = RunWatch(page)
            page.add_init_script(IN_PAGE)
            page.goto(url)
            page.get_by_role("heading", name="1 · Data").wait_for()
            wait_idle(page)
            switches = page_switches(page, args.runs)
            page.locator('[data-testid="stSidebarNav"]').get_by_text("3 · Budget").click()
            page.get_by_role("heading", name="3 · Budget").wait_for()
            wait_idle(page)
            new = [f"{1.5 + run / 10:g}" for run in range(args.runs)]
            fresh = what_ifs(page, runs, new)
            back = what_ifs(page, runs, (new[-2:] * args.runs)[: args.runs])
            page.locator('[data-testid="stSidebarNav"]').get_by_text("1 · Data").click()
            page.get_by_role("heading", name="1 · Data").wait_for()
            wait_idle(page)
            parsed = uploads(page, data, args.runs)
            browser.close()
    print(f"bundled sample (50,000 rows, 10,401 cells); upload {args.rows:,} rows {size:,} B")
    print(f"load average before {load_before}, after {os.getloadavg()[0]:.2f}")
    print(line("page switch (sample plan)", switches, 0.300))
    for label, times in (("new ε", fresh), ("ε tried before", back)):
        print(line(f"what-if, {label}: shown", times["shown"], 0.100))
        print(line(f"what-if, {label}: in page", times["in page"], 0.100))
        print(line(f"what-if, {label}: run ended", times["ended"], 0.100))
    print(line(f"upload + parse ({args.rows:,} rows)", parsed, 2.0))


if __name__ == "__main__":
    main()
