"""The Budget page's what-ifs before and after a change, side by side in one run (not a test).

Two `streamlit run app.py` servers, one on a copy of an earlier commit (`--before`, default
`main`) and one on this checkout, each driven in its own Chromium page. The same actions
alternate between them (which goes first alternates too), so both see the same machine load:

- ε typed into the exact box (Enter), values not tried before, then values tried a moment ago;
- the accountant switched in its select box (typed, Enter): each accountant once at the
  current ε, then each again (back to one tried before).

Each time is measured inside the page, from the Enter key's `keydown` to the first DOM change
that shows the new result (a MutationObserver: "The whole release is ε = …" for ε, the
composition the accountant names for a switch), so Playwright's own round trips are not in it.

    python bench/bench_whatif.py [--before main] [--runs 11]

It prints the load average before and after: the machine is shared and the figures move with
it; the side-by-side is the fair comparison.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from helpers.browser import (  # noqa: E402
    CHROMIUM_FLAGS,
    EPSILON_BOX,
    RunWatch,
    chromium_path,
    go,
    streamlit_server,
    wait_idle,
)

# In the page: when Enter went down, and when the DOM first met the awaited condition.
IN_PAGE = """
window.whatIf = {enter: null, shown: null, want: null};
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') window.whatIf.enter = performance.now();
}, true);
new MutationObserver(() => {
  const t = window.whatIf;
  if (t.want && t.shown === null && t.want(document.body.innerText)) t.shown = performance.now();
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
EXPECT = "(source) => Object.assign(window.whatIf, {enter: null, shown: null, want: eval(source)})"


def total_is(value: str) -> str:
    """A JavaScript predicate on the page's text: the total reads exactly ε = `value`."""
    pattern = "release is ε = " + value.replace(".", "\\\\.") + "(?![0-9.])"
    return f"(text) => new RegExp('{pattern}').test(text)"


# each accountant's choice in the select box (typed) and what its total line then says
ACCOUNTANTS = {
    "zCDP": "(text) => text.includes('composed by zcdp composition')",
    "approximate": "(text) => text.includes('composed by pld composition')",
    "advanced": "(text) => text.includes('tighter than advanced composition')",
    "Rényi": "(text) => text.includes('composed by renyi composition')",
    "pure": "(text) => text.includes('composed by basic composition.') && "
    "!text.includes('accounting: auto')",
    "auto:": "(text) => text.includes('accounting: auto')",
}


def snapshot(rev: str, folder: Path) -> Path:
    """The files of commit `rev`, unpacked into `folder` (not a worktree: nothing to remove)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


class Side:
    """One server's page on the Budget page, timing its what-ifs."""

    def __init__(self, name: str, page: Page) -> None:
        self.name, self.page = name, page
        self.runs = RunWatch(page)
        page.add_init_script(IN_PAGE)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.get_by_role("heading", name="1 · Data").wait_for()
        wait_idle(self.page)
        go(self.page, "3 · Budget")

    def timed(self, act, condition: str) -> float:
        """Seconds from Enter to the condition met in the page; waits for the run's end."""
        self.page.evaluate(EXPECT, condition)
        before = len(self.runs.statuses)
        act()
        self.page.wait_for_function("() => window.whatIf.shown !== null", timeout=120_000)
        self.runs.wait_for_run(before, timeout=120)
        self.page.wait_for_timeout(300)  # a user's pause before the next change
        return float(self.page.evaluate("() => window.whatIf.shown - window.whatIf.enter")) / 1000

    def epsilon(self, value: str) -> float:
        box = self.page.locator(EPSILON_BOX)
        box.fill(value)
        return self.timed(lambda: box.press("Enter"), total_is(value))

    def accountant(self, choice: str) -> float:
        select = self.page.locator(".st-key-accounting input")
        select.click()
        select.fill(choice)
        return self.timed(lambda: select.press("Enter"), ACCOUNTANTS[choice])


def alternate(sides: list[Side], step, values: list[str]) -> dict[str, list[float]]:
    """`step(side, value)` for each value on both sides, the first side alternating."""
    times: dict[str, list[float]] = {side.name: [] for side in sides}
    for number, value in enumerate(values):
        for side in sides if number % 2 == 0 else sides[::-1]:
            times[side.name].append(step(side, value))
    return times


def row(what: str, times: dict[str, list[float]], target: float) -> str:
    cells = []
    for name in ("before", "after"):
        values = times[name]
        cells.append(f"{statistics.median(values) * 1000:.0f} ms (max {max(values) * 1000:.0f})")
    met = "met" if statistics.median(times["after"]) <= target else "**not met**"
    return f"| {what} | {cells[0]} | {cells[1]} | ≤ {target * 1000:.0f} ms: {met} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="main", help="the commit (or folder) compared")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        before = Path(args.before)  # a folder (a variant being tried) or a commit
        if not before.is_dir():
            before = snapshot(args.before, tmp / "before")
        roots = {"before": before, "after": ROOT}
        driver = stack.enter_context(sync_playwright())
        browser = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        sides = []
        for name, root in roots.items():
            url = stack.enter_context(streamlit_server(tmp / f"{name}.sqlite", root=root))
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(120_000)
            side = Side(name, page)
            side.open(url)
            side.epsilon("1.2")  # a first what-if warms the server's code paths up
            sides.append(side)
        new = [f"{1.5 + run / 10:g}" for run in range(args.runs)]
        fresh = alternate(sides, Side.epsilon, new)
        back = alternate(sides, Side.epsilon, (new[-2:] * args.runs)[: args.runs])
        cycle = list(ACCOUNTANTS)
        first = alternate(sides, Side.accountant, cycle)
        again = alternate(sides, Side.accountant, (cycle * args.runs)[: max(args.runs, 6)])
        browser.close()
    print(f"before: {args.before}; after: this checkout; medians of {args.runs} (Chromium)")
    print(f"load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f}\n")
    print("| what-if (Enter to the new figure in the page) | before | after | target |")
    print("|---|---:|---:|---:|")
    print(row("ε, a value not tried before", fresh, 0.1))
    print(row("ε, back to a value tried a moment ago", back, 0.1))
    print(row("accountant, each at the current ε", first, 0.3))
    print(row("accountant, back to one tried before", again, 0.3))


if __name__ == "__main__":
    main()
