"""Statistics on the bundled sample at ε = 1 per statistic (issue 16's target and figures).

1. Median age by state (exponential mechanism, integer grid 0..100, pure ε = 1, one row per
   person): for states with ≥ 500 people, the share of 100 secure releases within 2 years of
   the true median, and the exact probability of that from the mechanism's distribution.
2. Mean and total income by state (ε = 1 each, bounds [0, 500000]): typical error.
3. County domain discovery (approx ε = 1, δ = 1e-6, min_count 20): counties found.

    python bench/bench_stats.py [--releases 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.plan.stat_spec import DiscoverSpec, parse_stat
from dprelease.release.stat_noise import SECURE
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.discovery import calibrate_discovery, discover_domain
from dprelease.stats.means import calibrate_mean, draw_means
from dprelease.stats.quantile import calibrate_quantile, draw_quantiles, quantile_pmf, value_errors
from dprelease.stats.sums import calibrate_sum, draw_sums

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "census_sample.csv"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", type=int, default=100)
    args = parser.parse_args()
    options = pacsv.ConvertOptions(column_types={"state": "string", "county": "string"})
    table = pacsv.read_csv(SAMPLE, convert_options=options)
    states = np.array(table.column("state").to_pylist())
    names = sorted(set(states))
    cells = np.searchsorted(names, states)
    age = np.array(table.column("age").to_pylist(), dtype=float)
    income = np.array(table.column("income").to_pylist(), dtype=float)
    ctx = StatContext(1, "add_remove", grouped=True)
    pure = Share("pure", epsilon=1.0)

    spec = parse_stat({"quantile": 0.5, "column": "age", "bounds": [0, 100]}, "median_age")
    mech = calibrate_quantile(spec, pure, ctx)
    data = StatData(cells, age, len(names))
    groups = list(data.groups())
    big = [i for i, g in enumerate(groups) if g.size >= 500]
    truth = np.array([np.quantile(g, 0.5, method="inverted_cdf") for g in groups])
    start = time.perf_counter()
    releases = np.stack([draw_quantiles(data, mech, SECURE)[:, 0] for _ in range(args.releases)])
    seconds = (time.perf_counter() - start) / args.releases
    within = np.abs(releases[:, big] - truth[big]) <= 2
    exact = []
    for i in big:
        pmf = quantile_pmf(groups[i], mech.grid(), Fraction(1, 2), mech.scales[0])
        exact.append(pmf[value_errors(groups[i], mech.grid(), Fraction(1, 2)) <= 2].sum())
    print(f"median age by state, pure ε = 1 (s = {mech.scales[0]:g}), {len(big)} states ≥ 500:")
    print(f"  within 2 years: {within.mean():.2%} of {within.size} (state, release) pairs;")
    print(f"  worst state {within.mean(axis=0).min():.0%} of {args.releases} releases")
    miss = [1 - e for e in exact]
    print(
        f"  exact P(not within 2 years): worst state {max(miss):.1e}, "
        f"median {statistics.median(miss):.1e}"
    )
    small = [i for i, g in enumerate(groups) if 0 < g.size < 500]
    tiny = np.abs(releases[:, small] - truth[small]) <= 2
    print(f"  states < 500 people ({len(small)}): within 2 years in {tiny.mean():.1%} of pairs")
    print(f"  releases where every such state is within 2 years: {within.all(axis=1).mean():.0%}")
    print(f"  secure draw of all {len(names)} states: {seconds * 1000:.0f} ms")

    bounds = [0, 500000]
    mean_mech = calibrate_mean(parse_stat({"mean": "income", "bounds": bounds}, "m"), pure, ctx)
    sum_spec = parse_stat({"sum": "income", "bounds": bounds}, "s")
    assert sum_spec.kind == "sum"
    sum_mech = calibrate_sum(sum_spec, pure, ctx)  # type: ignore[arg-type]
    income_data = StatData(cells, income, len(names))
    true_mean = np.array([g.clip(*bounds).mean() for g in income_data.groups()])
    true_sum = np.array([g.clip(*bounds).sum() for g in income_data.groups()])
    mean_err = np.stack([draw_means(income_data, mean_mech, SECURE) - true_mean for _ in range(20)])
    sum_err = np.stack([draw_sums(income_data, sum_mech, SECURE) - true_sum for _ in range(20)])
    rel = np.abs(mean_err[:, big]) / true_mean[big]
    print("income by state, pure ε = 1 each (bounds [0, 500000], 20 releases):")
    print(
        f"  sum: noise std {sum_mech.value_std:,.0f}; median |error| / sum "
        f"{np.median(np.abs(sum_err[:, big]) / true_sum[big]):.2%} (states ≥ 500)"
    )
    print(
        f"  mean: median |error| / mean {np.median(rel):.2%}, 95th percentile "
        f"{np.quantile(rel, 0.95):.2%} (states ≥ 500)"
    )

    counties = table.column("county").to_pylist()
    disc = calibrate_discovery(DiscoverSpec(20), Share("approx", 1.0, 1e-6), ctx)
    found = [len(discover_domain(counties, disc, SECURE).values) for _ in range(5)]
    sizes = np.unique(counties, return_counts=True)[1]
    print(f"county discovery, ε = 1, δ = 1e-6, min_count 20 (threshold {disc.threshold}):")
    print(
        f"  found {statistics.median(found)} counties (median of 5); "
        f"{np.count_nonzero(sizes >= disc.threshold)} have ≥ {disc.threshold} people, "
        f"{sizes.size} occur"
    )


if __name__ == "__main__":
    main()
