"""The test suite's own cost: wall time and the peak memory of its whole process tree.

Issue 25 asks for the whole suite in at most 10 minutes on this 2-core machine, with a peak
under 3 GB. GNU `time -v` reports the largest *single* process (ru_maxrss), which hides the
sum when pytest-xdist workers, Streamlit servers, Chromium and Spark's JVM run side by side; so
this script samples the resident memory of every process below the suite (from /proc, twice a
second) and reports the peak of their sum, besides the wall time and pytest's own summary.

    python bench/bench_suite.py                  # the README's test command, as CI runs it
    python bench/bench_suite.py -- tests/unit    # any pytest arguments after `--`
    python bench/bench_suite.py --runs 3         # median of several runs

Linux only (reads /proc). The figures go in docs/trust.md ("The suite's own cost").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    """Every live process's children, read from /proc/<pid>/stat."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces: split after its last ')'
        fields = stat[stat.rfind(")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _tree_rss(root: int) -> list[tuple[int, str]]:
    """Resident bytes and a short name of `root` and each of its descendants now."""
    tree = _children()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        todo.extend(tree.get(pid, []))
        try:
            resident_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        found.append((resident_pages * PAGE, _short_name(command)))
    return found


def _short_name(command: list[bytes]) -> str:
    """What kind of process this is: pytest worker, streamlit, chromium, java, python -m …"""
    words = [w.decode(errors="replace") for w in command if w]
    text = " ".join(words)
    for kind in ("chromium", "java", "streamlit", "pyspark.daemon", "playwright"):
        if kind in text:
            return kind
    if "exec(eval(sys.stdin.readline()))" in text:
        return "pytest worker"
    return " ".join(Path(w).name for w in words[:3])[:40]


def run_once(pytest_args: list[str], log: Path | None = None) -> tuple[float, int, str]:
    """One run of the suite: (wall seconds, peak summed RSS in bytes, pytest's summary: the
    short test summary when something failed, else its last line)."""
    env = dict(os.environ, CI="1")
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *pytest_args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = 0
    at_peak: list[tuple[int, str]] = []
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, at_peak
        while not done.is_set():
            processes = _tree_rss(process.pid)
            total = sum(rss for rss, _ in processes)
            if total > peak:
                peak, at_peak = total, processes
            done.wait(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    if log is not None:  # pytest's whole output (failures, --durations), for a closer look
        log.write_text(output)
    lines = [line for line in output.splitlines() if line.strip()]
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    summary = "\n".join([*failed, lines[-1]]) if lines else "(no output)"
    return wall, peak, summary + "\n  at the peak: " + _by_kind(at_peak)


def _by_kind(processes: list[tuple[int, str]]) -> str:
    """The peak's processes summed by kind, largest first (e.g. "pytest worker ×2 1.31 GiB")."""
    kinds: dict[str, list[int]] = {}
    for rss, name in processes:
        kinds.setdefault(name, []).append(rss)
    ranked = sorted(kinds.items(), key=lambda item: -sum(item[1]))
    return ", ".join(f"{name} ×{len(sizes)} {sum(sizes) / 2**30:.2f} GiB" for name, sizes in ranked)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs to take the median of")
    parser.add_argument("--log", type=Path, help="write pytest's whole output of the last run here")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    walls, peaks = [], []
    for number in range(1, args.runs + 1):
        wall, peak, summary = run_once(args.pytest_args, args.log)
        walls.append(wall)
        peaks.append(peak)
        print(f"run {number}: {wall / 60:.1f} min, peak {peak / 2**30:.2f} GiB  | {summary}")
    print(
        f"median of {args.runs}: {statistics.median(walls) / 60:.1f} min wall, "
        f"peak {statistics.median(peaks) / 2**30:.2f} GiB (whole process tree), "
        f"{os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
