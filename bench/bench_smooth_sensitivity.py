"""The smooth sensitivity of a median (issue 35, finding 4): CPU seconds by ε on 1 M values.

The old scan over t cost O(1/β²): 2 s at ε = 1, 5.4 s at 0.001, over 300 s at 1e-4. The pairs
algorithm (`dprelease/stats/smooth_bound.py`) is O(d·n log n) whatever ε.
`--ratio` (issue 38.3): the old bound (windows of 2(t + 1)·d places, i.e. the same formula at 2d)
over the textbook one, on lognormal cells of 600 rows to 1 M, at ε = 1 and 0.1.
Run: python bench/bench_smooth_sensitivity.py [--rows N] [--ratio]
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dprelease.stats.smooth_quantile import (  # noqa: E402
    CAUCHY_B,
    laplace_constants,
    order_statistic,
    padded,
    smooth_sensitivity,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--ratio", action="store_true", help="old bound / textbook bound")
    args = parser.parse_args()
    if args.ratio:
        ratios()
        return
    x = padded(np.random.default_rng(1).lognormal(10, 1, args.rows), 0.0, 1e7)
    _, r = order_statistic(x, Fraction(1, 2))
    print(f"median of {args.rows:,} lognormal incomes, bounds [0, 1e7]; CPU seconds")
    for epsilon in ("1", "0.001", "0.0001"):
        eps = Fraction(epsilon)
        betas = {
            "laplace (δ = 1e-6)": laplace_constants(eps, Fraction(1, 10**6))[1],
            "cauchy": float(eps * CAUCHY_B),
        }
        for law, beta in betas.items():
            start = time.process_time()
            s = smooth_sensitivity(x, r, beta, 1)
            took = time.process_time() - start
            print(f"ε = {epsilon:>6}  {law:<18}  S = {s:12.6g}  {took:5.2f} s")


def ratios() -> None:
    """The old bound over the textbook one (issue 38.3), a median on lognormal cells."""
    print("| rows | ε | noise | old S | textbook S | old / textbook |")
    print("|---|---|---|---|---|---|")
    for rows in (600, 1_200, 2_400, 100_000, 1_000_000):
        x = padded(np.random.default_rng(1).lognormal(10, 1, rows), 0.0, 1e7)
        _, r = order_statistic(x, Fraction(1, 2))
        for epsilon in ("1", "0.1"):
            eps = Fraction(epsilon)
            betas = {
                "laplace δ = 1e-6": laplace_constants(eps, Fraction(1, 10**6))[1],
                "cauchy": float(eps * CAUCHY_B),
            }
            for law, beta in betas.items():
                new, old = smooth_sensitivity(x, r, beta, 1), smooth_sensitivity(x, r, beta, 2)
                print(f"| {rows:,} | {epsilon} | {law} | {old:.4g} | {new:.4g} | {old / new:.2f} |")


if __name__ == "__main__":
    main()
