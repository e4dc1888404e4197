"""Post-processing at census scale: ≥ 1,000,000 cells with the state → county hierarchy.

Tables: county×age×sex×race (3,143 × 24 five-year ages × 2 × 7 = 1,056,024 cells),
state×age×sex×race, county, state and the total, true counts from the synthetic sample
(1,000,000 persons, seed 1), preview noise at zCDP ε = 1. Runs the release's whole
post-processing (`dprelease.postprocess.postprocess`: consistent, nonnegative, integer) and
prints the seconds and the process's peak RSS. Target: ≤ 60 s and ≤ 4 GB.
Usage: python bench/bench_postprocess_scale.py [--runs 1]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dprelease.accounting.allocation import allocate  # noqa: E402
from dprelease.data.count import count, encode  # noqa: E402
from dprelease.plan.parse import parse_plan  # noqa: E402
from dprelease.postprocess.pipeline import postprocess  # noqa: E402
from dprelease.release.noise import preview_noise  # noqa: E402
from dprelease.sample.generator import generate_sample, sample_plan_dict  # noqa: E402

TABLES = [
    ["county", "age", "sex", "race"], ["state", "age", "sex", "race"],
    ["county"], ["state"], [],
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    mapping = sample_plan_dict("unused.csv")
    mapping["columns"]["age"] = {"kind": "numeric", "bins": {"start": 0, "stop": 120, "width": 5}}
    mapping["tables"] = [{"name": "_".join(by) or "total", "by": by} for by in TABLES]
    mapping["budget"] = {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10}
    mapping["postprocess"] = {"nonnegative": True, "integer": True, "consistent": True}
    plan = parse_plan(mapping)
    truth = count(encode(generate_sample(1_000_000, seed=1), plan), plan).counts
    allocation = allocate(plan)
    cells = sum(v.size for v in truth.values())
    rng = np.random.default_rng(0)
    seconds = []
    for _ in range(args.runs):
        noisy = {
            name: counts + preview_noise(allocation.table(name).noise, counts.size, rng)
            for name, counts in truth.items()
        }
        start = time.perf_counter()
        result = postprocess(plan, allocation, noisy)
        seconds.append(time.perf_counter() - start)
        print(f"run: {seconds[-1]:.1f} s, steps {result.steps_applied}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"{cells:,} cells: median {statistics.median(seconds):.1f} s, peak RSS {peak:.2f} GB")


if __name__ == "__main__":
    main()
