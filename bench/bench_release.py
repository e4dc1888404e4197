"""Whole-process speed of `dprelease release` against the bare floor script.

Generates the synthetic sample at 100,000 and 1,000,000 rows (once, in bench/out/), writes
the benchmark workload plan, then runs, interleaved and several times each,
  A: python -m dprelease release PLAN --data CSV --out <new>.zip
  B: python bench/floor_release.py CSV
each as a whole process (interpreter start to exit), and prints medians and the ratio A/B
measured side by side. Usage: python bench/bench_release.py [--runs 7] [--rows 100000 1000000]
[--budget pure|defaults] (the workload's pure, equal budget, or the budget's defaults:
accounting and strategy auto; see bench/workload.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from workload import BUDGETS, workload_plan_dict  # noqa: E402

from dprelease.sample.generator import write_sample  # noqa: E402


def prepare(rows: int, out: Path, budget: str) -> tuple[Path, Path]:
    data = out / f"sample_{rows}.csv"
    if not data.exists():
        write_sample(data, rows, seed=1)
    suffix = "" if budget == "pure" else f"_{budget}"
    plan = out / f"workload_{rows}{suffix}.plan.json"
    plan.write_text(json.dumps(workload_plan_dict(data.name, budget)))
    return data, plan


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="pure")
    args = parser.parse_args()
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    print("| rows | dprelease release (median s) | floor (median s) | ratio (median of paired) |")
    print("|---:|---:|---:|---:|")
    for rows in args.rows:
        data, plan = prepare(rows, out, args.budget)
        scratch = Path(tempfile.mkdtemp())
        release_times, floor_times, ratios = [], [], []
        floor = [sys.executable, str(HERE / "floor_release.py"), str(data)]
        for run in range(args.runs + 1):
            release = [sys.executable, "-m", "dprelease", "release", str(plan),
                       "--data", str(data), "--out", str(scratch / f"r{run}.zip")]  # fmt: skip
            a, b = timed(release), timed(floor)
            if run == 0:
                continue  # warm-up: file cache, bytecode
            release_times.append(a)
            floor_times.append(b)
            ratios.append(a / b)
        shutil.rmtree(scratch)
        print(
            f"| {rows:,} | {statistics.median(release_times):.3f} | "
            f"{statistics.median(floor_times):.3f} | {statistics.median(ratios):.2f}× |"
        )


if __name__ == "__main__":
    main()
