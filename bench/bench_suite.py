"""The test suite's own cost: wall time and the peak memory of its whole process tree.

Issue 25 asks for the whole suite in at most 10 minutes on this 2-core machine, with a peak
under 3 GB. GNU `time -v` reports the largest *single* process (ru_maxrss), which hides the
sum when pytest-xdist workers, Streamlit servers, Chromium and Spark's JVM run side by side; so
this script samples the memory of every process below the suite (from /proc, twice a second)
and reports the peak of their sum, two ways: PSS (proportional set size: a page shared by k
processes counts 1/k in each, so the sum is the memory the suite really holds) and RSS (each
process's resident pages in full: an upper bound that counts Chromium's and the forked
workers' shared pages once per process). Besides: the wall time, pytest's own summary, and the
processes at the PSS peak by kind.

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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = os.sysconf("SC_PAGE_SIZE")
GIB = 2**30


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


def _tree_memory(root: int) -> list[tuple[int, int, str]]:
    """(RSS bytes, PSS bytes, a short name) of `root` and each of its descendants now."""
    tree = _children()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        todo.extend(tree.get(pid, []))
        try:
            resident_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        pss_kib = next(
            (int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0
        )
        found.append((resident_pages * PAGE, pss_kib * 1024, _short_name(command)))
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


@dataclass
class Run:
    """One run of the suite: wall seconds, the peaks of the summed PSS and RSS (bytes), the
    processes at the PSS peak, and pytest's summary."""

    wall: float
    peak_pss: int
    peak_rss: int
    at_peak: list[tuple[int, int, str]]
    summary: str


def run_once(pytest_args: list[str], log: Path | None = None) -> Run:
    """One run of the suite; pytest's summary is the short test summary when something failed,
    else its last line."""
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
    peak_pss = peak_rss = 0
    at_peak: list[tuple[int, int, str]] = []
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_pss, peak_rss, at_peak
        # The sampler reads every process's smaps_rollup, which costs the kernel a walk of
        # its pages: about a seventh of a core with Chromium and a JVM up. At the lowest
        # priority (Linux: this thread only) it takes what the suite leaves idle.
        os.setpriority(os.PRIO_PROCESS, 0, 19)
        while not done.is_set():
            processes = _tree_memory(process.pid)
            peak_rss = max(peak_rss, sum(rss for rss, _, _ in processes))
            pss = sum(p for _, p, _ in processes)
            if pss > peak_pss:
                peak_pss, at_peak = pss, processes
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
    return Run(wall, peak_pss, peak_rss, at_peak, summary)


def _by_kind(processes: list[tuple[int, int, str]]) -> str:
    """The processes summed by kind, largest PSS first (e.g. "pytest worker ×2 1.10 GiB")."""
    kinds: dict[str, list[int]] = {}
    for _, pss, name in processes:
        kinds.setdefault(name, []).append(pss)
    ranked = sorted(kinds.items(), key=lambda item: -sum(item[1]))
    return ", ".join(f"{name} ×{len(sizes)} {sum(sizes) / GIB:.2f}" for name, sizes in ranked)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs to take the median of")
    parser.add_argument("--log", type=Path, help="write pytest's whole output of the last run here")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    runs = []
    for number in range(1, args.runs + 1):
        run = run_once(args.pytest_args, args.log)
        runs.append(run)
        print(
            f"run {number}: {run.wall / 60:.1f} min, peak {run.peak_pss / GIB:.2f} GiB PSS "
            f"({run.peak_rss / GIB:.2f} GiB RSS)  | {run.summary}\n"
            f"  at the PSS peak (GiB): {_by_kind(run.at_peak)}"
        )
    print(
        f"median of {args.runs}: {statistics.median(r.wall for r in runs) / 60:.1f} min wall, "
        f"peak {statistics.median(r.peak_pss for r in runs) / GIB:.2f} GiB PSS "
        f"({statistics.median(r.peak_rss for r in runs) / GIB:.2f} GiB RSS) over the whole "
        f"process tree, {os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
