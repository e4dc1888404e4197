"""Post-processing speed on ~100,000 cells over ten overlapping tables with a geography
hierarchy, and its accuracy against the truth on the bundled sample.

Part 1 (speed): the synthetic sample generator (1,000,000 persons, seed 1) counted into ten
tables (county×age, county×race, county×education, county×sex, county×hispanic, county,
state×age×sex, state×race×hispanic, age×sex, state): 106,000 cells; zCDP ε = 1 split equally.
Each step is timed separately (median of --runs runs, fresh noise each run):
constraints (build), consistent (least squares), nonnegative (active set),
integer (controlled rounding, sequential method and, once, the HiGHS MILP).
Part 2 (accuracy): the bundled sample with its plan and consistent: true, RMSE against the
true counts of the raw measurements and of the released tables, averaged over --seeds previews.

Usage: python bench/bench_postprocess.py [--runs 5] [--seeds 5] [--skip-milp]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dprelease.accounting.allocation import allocate  # noqa: E402
from dprelease.data.count import count, encode, load_data  # noqa: E402
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict  # noqa: E402
from dprelease.postprocess.consistency import (  # noqa: E402
    bounded_projection,
    weighted_projection,
)
from dprelease.postprocess.pipeline import make_problem  # noqa: E402
from dprelease.postprocess.rounding import controlled_round  # noqa: E402
from dprelease.release.draw import draw_preview  # noqa: E402
from dprelease.release.noise import preview_noise  # noqa: E402
from dprelease.sample.generator import generate_sample, sample_plan_dict  # noqa: E402

TABLES = [
    ["county", "age"], ["county", "race"], ["county", "education"], ["county", "sex"],
    ["county", "hispanic"], ["county"], ["state", "age", "sex"], ["state", "race", "hispanic"],
    ["age", "sex"], ["state"],
]  # fmt: skip


def speed(runs: int, milp: bool) -> None:
    mapping = sample_plan_dict("unused.csv")
    mapping["tables"] = [{"name": "_".join(by), "by": by} for by in TABLES]
    mapping["budget"] = {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10}
    mapping["postprocess"] = {"nonnegative": True, "integer": True, "consistent": True}
    plan = parse_plan(mapping)
    truth = count(encode(generate_sample(1_000_000, seed=1), plan), plan).counts
    allocation = allocate(plan)
    cells = sum(v.size for v in truth.values())
    print(f"speed: {len(TABLES)} tables, {cells:,} cells, median of {runs} runs (seconds)")
    times: dict[str, list[float]] = {}
    rng = np.random.default_rng(0)
    for _ in range(runs):
        noisy = {
            name: counts + preview_noise(allocation.table(name).noise, counts.size, rng)
            for name, counts in truth.items()
        }
        start = time.perf_counter()
        problem = make_problem(plan, allocation, noisy)
        times.setdefault("constraints (build)", []).append(time.perf_counter() - start)
        start = time.perf_counter()
        weighted_projection(problem.constraints, problem.measured, problem.variances)
        times.setdefault("consistent (least squares)", []).append(time.perf_counter() - start)
        lower, upper = np.zeros(problem.measured.size), np.full(problem.measured.size, np.inf)
        start = time.perf_counter()
        estimate = bounded_projection(
            problem.constraints, problem.measured, problem.variances, lower, upper
        )
        times.setdefault("consistent + nonnegative (active set)", []).append(
            time.perf_counter() - start
        )
        assert estimate is not None
        weights = 1 / problem.variances
        start = time.perf_counter()
        rounded, _ = controlled_round(
            problem.workload, problem.constraints, estimate, weights, lower, upper, "sequential"
        )
        times.setdefault("integer (sequential)", []).append(time.perf_counter() - start)
        assert np.abs(problem.constraints.matrix @ rounded).max() == 0 and rounded.min() >= 0
    if milp:
        start = time.perf_counter()
        _, how = controlled_round(
            problem.workload, problem.constraints, estimate, weights, lower, upper, "milp"
        )
        times["integer (HiGHS MILP, one run)"] = [time.perf_counter() - start]
        print(f"  (MILP run ended with method {how})")
    total = 0.0
    for step, values in times.items():
        median = statistics.median(values)
        if "MILP" not in step and "least squares" not in step:
            total += median
        print(f"  {step:42s} {median:8.3f}")
    print(f"  {'all steps (build + active set + sequential)':42s} {total:8.3f}")


def accuracy(seeds: int) -> None:
    raw_plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    mapping = plan_to_dict(raw_plan)
    mapping["postprocess"]["consistent"] = True
    plan = parse_plan(mapping, base_dir=raw_plan.base_dir)
    true_counts = count(load_data(plan.data_path, plan), plan)
    truth = true_counts.counts
    raw = {s.name: 0.0 for s in plan.tables}
    post = dict(raw)
    bias = dict(raw)
    for seed in range(seeds):
        preview = draw_preview(plan, true_counts, rng=np.random.default_rng(seed))
        for table in preview.tables:
            true = truth[table.name]
            raw[table.name] += float(np.mean((table.noisy_counts - true) ** 2.0)) / seeds
            post[table.name] += float(np.mean((table.released_counts - true) ** 2.0)) / seeds
            bias[table.name] += float(np.mean(table.released_counts - true)) / seeds
    print(f"\naccuracy on the bundled sample, consistent: true, {seeds} seeds (RMSE per cell)")
    print(f"  {'table':28s} {'cells':>6s} {'raw':>7s} {'after':>7s} {'bias after':>10s}")
    all_raw = all_post = cells = 0.0
    for spec in plan.tables:
        n = spec.cells(plan.schema)
        name = spec.name
        print(
            f"  {name:28s} {n:6d} {raw[name] ** 0.5:7.2f} {post[name] ** 0.5:7.2f} "
            f"{bias[name]:10.2f}"
        )
        all_raw += raw[name] * n
        all_post += post[name] * n
        cells += n
    print(f"  {'all cells':28s} {int(cells):6d} {(all_raw / cells) ** 0.5:7.2f} "
          f"{(all_post / cells) ** 0.5:7.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--skip-milp", action="store_true")
    args = parser.parse_args()
    speed(args.runs, not args.skip_milp)
    accuracy(args.seeds)


if __name__ == "__main__":
    main()
