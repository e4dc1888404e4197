"""Bench: 1,000,000 OUE respondents with d = 100, randomised on the client side and
aggregated into unbiased counts (target < 5 s). Prints each run and the median.

    python bench/bench_ldp.py [--runs 5] [--n 1000000] [--d 100] [--protocol OUE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.ldp import protocol, secure_generator


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--protocol", default="OUE")
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    chosen = protocol(args.protocol)
    values = np.random.default_rng(0).integers(0, args.d, size=args.n)  # the respondents' data
    times = []
    for run in range(args.runs):
        start = time.perf_counter()
        rng = secure_generator()
        estimate = chosen.estimate_counts(values, args.epsilon, args.d, rng)
        times.append(time.perf_counter() - start)
        error = np.abs(estimate - np.bincount(values, minlength=args.d)).max()
        print(f"run {run + 1}: {times[-1]:.2f} s (largest count error {error:,.0f})")
    print(
        f"{chosen.name}, n = {args.n:,}, d = {args.d}, ε = {args.epsilon:g}: "
        f"median {statistics.median(times):.2f} s over {args.runs} runs"
    )


if __name__ == "__main__":
    main()
