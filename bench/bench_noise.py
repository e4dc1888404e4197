"""Benchmark: secure noise, OpenDP's vectorised samplers against the exact table samplers.

    python bench/bench_noise.py                 # 10^3 … 10^7 cells, both mechanisms
    python bench/bench_noise.py --quick         # 10^3 … 10^6, fewer runs

Per mechanism (discrete Laplace b = 17, discrete Gaussian σ = 21.3: the benchmark release's
scales) and size, cells per second of:
- OpenDP: `measurement(counts.tolist())`, as `secure_noisy_counts` calls it;
- exact, new table: `exact_noise`'s sampler built and drawn (what a release pays for a new
  scale);
- exact, table built: the draw alone (a table of that scale was built before).
Runs alternate between the samplers; medians of `--runs` runs (fewer for OpenDP at 10^7,
which takes over a minute a run). Then the cost of a table at large scales (where the table
is capped) and OpenDP's speed at a scale of 10^6, where OpenDP draws.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.accounting.mechanisms import Noise
from dprelease.release.exact_noise import DiscreteGaussianSampler, DiscreteLaplaceSampler
from dprelease.release.exact_sampler import SymmetricTableSampler
from dprelease.release.noise import opendp_prelude

CASES: tuple[tuple[Noise, type[SymmetricTableSampler]], ...] = (
    (Noise("discrete_laplace", 17.0), DiscreteLaplaceSampler),
    (Noise("discrete_gaussian", 21.3), DiscreteGaussianSampler),
)


def _seconds(work: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    work(*args)
    return time.perf_counter() - start


def _new_table(kind: type[SymmetricTableSampler], scale: float, cells: int) -> object:
    return kind(scale).sample(cells)  # type: ignore[call-arg]


def _opendp(noise: Noise, counts: np.ndarray) -> Callable[[], object]:
    measurement = noise.kind.measurement(opendp_prelude(), noise.scale)
    return lambda: np.asarray(measurement(counts.tolist()), dtype=np.int64)


def _rate(cells: int, times: list[float]) -> str:
    return f"{cells / statistics.median(times):,.0f}"


def compare(sizes: list[int], runs: int, opendp_max_runs_at_1e7: int) -> None:
    print("| noise | cells | OpenDP cells/s | exact, new table | exact, table built | runs |")
    print("|---|---:|---:|---:|---:|---:|")
    for noise, kind in CASES:
        built = kind(noise.scale)
        for cells in sizes:
            counts = np.zeros(cells, dtype=np.int64)
            opendp_runs = min(runs, opendp_max_runs_at_1e7) if cells >= 10**7 else runs
            timings: dict[str, list[float]] = {"opendp": [], "new": [], "built": []}
            for run in range(runs):
                if run < opendp_runs:
                    timings["opendp"].append(_seconds(_opendp(noise, counts)))
                timings["new"].append(_seconds(_new_table, kind, noise.scale, cells))
                timings["built"].append(_seconds(built.sample, cells))
            print(
                f"| {noise.mechanism} {noise.scale:g} | {cells:,} | "
                f"{_rate(cells, timings['opendp'])} | {_rate(cells, timings['new'])} | "
                f"{_rate(cells, timings['built'])} | {opendp_runs}/{runs} |"
            )


def large_scales() -> None:
    print("\n| noise | table half-width K | build s | exact cells/s (10^6, built) |")
    print("|---|---:|---:|---:|")
    for kind, scale in ((DiscreteLaplaceSampler, 1900.0), (DiscreteGaussianSampler, 5600.0)):
        start = time.perf_counter()
        sampler = kind(scale)
        build = time.perf_counter() - start
        draw = statistics.median(_seconds(sampler.sample, 10**6) for _ in range(3))
        print(f"| {kind.__name__} {scale:g} | {sampler.half_width:,} | {build:.2f} | "
              f"{10**6 / draw:,.0f} |")  # fmt: skip
    print("\n| noise (OpenDP) | cells/s at 10^5 cells |")
    print("|---|---:|")
    for mechanism in ("discrete_laplace", "discrete_gaussian"):
        noise = Noise(mechanism, 1e6)
        counts = np.zeros(10**5, dtype=np.int64)
        times = [_seconds(_opendp(noise, counts)) for _ in range(3)]
        print(f"| {mechanism} 1e6 | {_rate(10**5, times)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^3 … 10^6 cells, 3 runs")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--opendp-runs-at-1e7", type=int, default=1)
    args = parser.parse_args()
    top = 6 if args.quick else 7
    runs = 3 if args.quick else args.runs
    compare([10**e for e in range(3, top + 1)], runs, args.opendp_runs_at_1e7)
    large_scales()


if __name__ == "__main__":
    main()
