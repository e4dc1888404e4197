"""Median age by state through the plan and the release path (issue 16's target).

A plan with `stat: {quantile: 0.5, column: age, bounds: [0, 100]}` by state (the sample plan's
public state domain), pure ε = 1 for the statistic alone, released N times with `draw_release`
(OpenDP's secure sampler, exactly what `dprelease release` draws). For states with ≥ 500
people: the share of releases within 2 years of the true median.

    python bench/bench_stats_release.py [--releases 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import MappingProxyType

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.data.count import TrueCounts
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.release.draw import draw_release
from dprelease.stats.source import read_stat_source

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "census_sample.csv"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", type=int, default=100)
    args = parser.parse_args()
    sample = plan_to_dict(load_plan(ROOT / "data" / "census_sample.plan.yaml"))
    raw = {
        "version": 1,
        "columns": {"state": sample["columns"]["state"]},
        "tables": [
            {
                "name": "median_age_by_state",
                "by": ["state"],
                "stat": {"quantile": 0.5, "column": "age", "bounds": [0, 100]},
            }
        ],
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }
    plan = parse_plan(raw)
    source = read_stat_source(SAMPLE, plan)
    data = source.stat_data(plan, plan.statistics[0])  # CONFIDENTIAL: the truth, for the bench
    groups = list(data.groups())
    truth = np.array(
        [np.quantile(g, 0.5, method="inverted_cdf") if g.size else np.nan for g in groups]
    )
    big = np.array([g.size >= 500 for g in groups])
    empty = TrueCounts(MappingProxyType({}))
    start = time.perf_counter()
    draws = np.stack(
        [
            draw_release(plan, empty, simulations=0, statistics_source=source)
            .statistics[0]
            .values[:, 0]
            for _ in range(args.releases)
        ]
    )
    seconds = (time.perf_counter() - start) / args.releases
    within = np.abs(draws[:, big] - truth[big]) <= 2
    print(f"{big.sum()} states with ≥ 500 people, {args.releases} releases (pure ε = 1):")
    print(f"  within 2 years: {within.mean():.2%} of (state, release) pairs")
    print(f"  worst state: within 2 years in {within.mean(axis=0).min():.0%} of releases")
    print(f"  releases with every such state within 2 years: {within.all(axis=1).mean():.0%}")
    print(f"  one release of all {len(groups)} states: {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
