"""Statistics without user bounds (issue 28.1): error on skewed incomes, side by side.

At the same budget (pure ε), for a median and a mean of incomes:

- median: the exponential-mechanism quantile over a grid within bounds (a typical guess
  [0, 200,000], and a wide [0, 10,000,000] every 1,000); the smooth-sensitivity median
  without bounds (Cauchy noise, pure ε; Laplace noise at (ε, δ = 1e-6), the approx
  accountant's) and with the wide public range [0, 10,000,000];
- mean: the clamped mean (noisy clamped sum / noisy count) with bounds [0, 200,000] and
  [0, 1,000,000]; sample and aggregate (K = 200, the default, and 1,000 groups; the
  exponential median of the group means over [0, 10,000,000] every 1,000).

Data: lognormal incomes (median ≈ 36,000, mean ≈ 60,000, 5% above 150,000), n rows in one
cell, and the test suite's ACS-like income column (tests/helpers/income_data.py: 3,000 rows,
uniform on 0–260,000). Errors from R releases with the preview samplers (numpy; the same laws
as the release's secure samplers, which the statistical tests check): RMSE, median |error| and
bias (mean error), all against the true statistic of the unclamped data, so the clamped
mean's bias shows. Run: python bench/bench_statistics_unbounded.py [--releases R]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dprelease.plan.stat_spec import parse_stat  # noqa: E402
from dprelease.stats.budget import Share, StatContext  # noqa: E402
from dprelease.stats.data import StatData  # noqa: E402
from dprelease.stats.noise import PreviewNoise  # noqa: E402
from dprelease.stats.registry import kind_of  # noqa: E402
from helpers.income_data import income_rows  # noqa: E402

CTX = StatContext(grouped=False)


def methods() -> list[tuple[str, str, dict[str, Any], str]]:
    """(statistic, label, stat mapping, accountant) in table order."""
    em = {"quantile": 0.5, "column": "x"}
    ss = {**em, "method": "smooth_sensitivity"}
    saa = {"mean": "x", "method": "sample_and_aggregate", "bounds": [0, 10_000_000]}
    return [
        ("median", "exponential [0, 200k]", {**em, "bounds": [0, 200_000]}, "pure"),
        (
            "median",
            "exponential [0, 10M] r=1000",
            {**em, "bounds": [0, 10_000_000], "resolution": 1000},
            "pure",
        ),
        ("median", "smooth sens., Cauchy", ss, "pure"),
        ("median", "smooth sens., Laplace δ=1e-6", ss, "approx"),
        ("median", "smooth, Laplace, [0, 10M]", {**ss, "bounds": [0, 10_000_000]}, "approx"),
        ("mean", "clamped [0, 200k]", {"mean": "x", "bounds": [0, 200_000]}, "pure"),
        ("mean", "clamped [0, 1M]", {"mean": "x", "bounds": [0, 1_000_000]}, "pure"),
        ("mean", "sample & aggregate K=200", {**saa, "resolution": 1000}, "pure"),
        ("mean", "sample & aggregate K=1000", {**saa, "resolution": 1000, "groups": 1000}, "pure"),
    ]


def share(accounting: str, epsilon: float) -> Share:
    if accounting == "approx":
        return Share("approx", epsilon=epsilon, delta=1e-6)
    return Share("pure", epsilon=epsilon)


def errors(
    values: np.ndarray, raw: dict[str, Any], sh: Share, releases: int, seed: int
) -> dict[str, float]:
    spec = parse_stat(raw, "bench")
    kind = kind_of(spec)
    mech = kind.calibrate(spec, sh, CTX)
    data = StatData.ungrouped(values)
    truth = float(np.median(values)) if spec.kind == "quantile" else float(values.mean())
    noise = PreviewNoise(np.random.default_rng(seed))
    started = time.perf_counter()
    drawn = np.array([float(kind.draw(data, mech, noise).ravel()[0]) for _ in range(releases)])
    seconds = (time.perf_counter() - started) / releases
    error = drawn - truth
    return {
        "truth": truth,
        "rmse": float(np.sqrt(np.mean(error**2))),
        "median_abs": float(np.median(np.abs(error))),
        "bias": float(error.mean()),
        "seconds": seconds,
    }


def data_sets() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(2026)
    acs = np.array([float(p) for _, p in income_rows() if p not in ("N", "")])
    return [
        ("lognormal n=10k", rng.lognormal(10.5, 1.0, 10_000)),
        ("lognormal n=100k", rng.lognormal(10.5, 1.0, 100_000)),
        ("ACS-like n=2.3k", acs),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=50)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0])
    args = parser.parse_args()
    print(f"{'data':<17} {'ε':>4}  {'statistic':<6} {'method':<29} {'truth':>9} {'RMSE':>10} "
          f"{'med|err|':>9} {'bias':>10} {'s/release':>9}")  # fmt: skip
    for name, values in data_sets():
        for epsilon in args.epsilons:
            for i, (stat, label, raw, accounting) in enumerate(methods()):
                e = errors(values, raw, share(accounting, epsilon), args.releases, seed=i)
                print(f"{name:<17} {epsilon:>4g}  {stat:<6} {label:<29} {e['truth']:>9.0f} "
                      f"{e['rmse']:>10.0f} {e['median_abs']:>9.0f} {e['bias']:>10.0f} "
                      f"{e['seconds']:>9.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
