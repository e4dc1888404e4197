"""approx noise before/after issue 14 point 4, and the PLD certification's cost.

Before: OpenDP's continuous Gaussian (float output). After: the discrete Gaussian through
`secure_noisy_counts` (our exact table sampler, or OpenDP's for small tables). Cells a second,
median of --runs; then the certification of the bundled sample plan under approx (first call
with dp_accounting's import, first call after it, and a cached repeat).

    python bench/bench_approx_noise.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from dprelease.accounting.mechanisms import DISCRETE_GAUSSIAN, GAUSSIAN, Noise
from dprelease.plan.parse import parse_plan
from dprelease.release.noise import secure_noisy_counts

SIGMA = 23.5  # the sample plan's per-table σ under approx, equal allocation


def rate(noise: Noise, cells: int, runs: int) -> float:
    counts = np.full(cells, 100, dtype=np.int64)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        secure_noisy_counts(counts, noise, 1, 1)
        times.append(time.perf_counter() - start)
    return cells / statistics.median(times)


def certification(runs: int) -> list[tuple[str, float]]:
    from dprelease.accounting import dgauss_pld
    from dprelease.accounting.allocation import allocate

    root = Path(__file__).resolve().parents[1]
    raw = yaml.safe_load((root / "data" / "census_sample.plan.yaml").read_text())
    plan = parse_plan(raw, root / "data")
    plan = replace(plan, budget=replace(plan.budget, accounting="approx"))
    out = []
    for label in ("first (imports dp_accounting)", "new ε (cold cache)", "same ε (cached)"):
        if label.startswith("new"):
            plan = replace(plan, budget=replace(plan.budget, epsilon=0.9))
            dgauss_pld._certify.cache_clear()
            dgauss_pld._composed.cache_clear()
        start = time.perf_counter()
        allocation = allocate(plan)
        out.append((label, time.perf_counter() - start))
    out.append((f"{len(allocation.measurements)} measurements, total", allocation.total.epsilon))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| cells | continuous Gaussian (OpenDP) cells/s | discrete Gaussian cells/s |")
    print("|---:|---:|---:|")
    for cells in (10_000, 100_000, 1_000_000):
        before = rate(Noise(GAUSSIAN.name, SIGMA), cells, args.runs if cells < 10**6 else 1)
        after = rate(Noise(DISCRETE_GAUSSIAN.name, SIGMA), cells, args.runs)
        print(f"| {cells:,} | {before:,.0f} | {after:,.0f} |")
    for label, value in certification(args.runs):
        print(f"{label}: {value:.3f}")


if __name__ == "__main__":
    main()
