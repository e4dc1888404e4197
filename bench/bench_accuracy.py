"""Accuracy of whole releases (issue 10): published tables against per-table discrete Laplace.

    python bench/bench_accuracy.py [--releases 30] [--rows 1000000]

For the bundled sample plan and for the benchmark workload on a generated file of `--rows`
rows, with the plan's defaults (accounting: auto, strategy: auto, allocation: optimal) and
every post-processing step (consistent, clamp at 0, non-negative, integer), it draws
`--releases` releases through the release path (numpy's sampler stands in for OpenDP's: the
same distributions, thousands of times faster; a benchmark publishes nothing) and prints:

- per table, the RMSE of the released counts ÷ the RMSE of per-table discrete Laplace with ε
  split equally (what OpenDP or Tumult give by default), and ÷ the table's exact raw
  least-squares RMSE; their mean and worst;
- the grand total's bias and its standard error;
- the bias of released cells by the size of the true cell.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import workload_plan_dict

from dprelease.accounting.allocation import allocate
from dprelease.accounting.mechanisms.discrete_laplace import discrete_laplace_variance
from dprelease.data.count import count, load_data
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.release.draw import draw_preview
from dprelease.sample.generator import write_sample

ROOT = Path(__file__).resolve().parent.parent
SIZE_CLASSES = ((0, 0), (1, 9), (10, 99), (100, 999), (1000, math.inf))
ALL_STEPS = {"clamp": [0, None], "nonnegative": True, "integer": True, "consistent": True}


def with_defaults(raw: dict) -> dict:
    """The plan with the budget's defaults and every post-processing step."""
    raw = dict(raw)
    raw["budget"] = {"epsilon": 1.0, "delta": 1e-10}
    raw["postprocess"] = ALL_STEPS
    return raw


def _ratio_and_se(per_release: list[float], reference: float) -> tuple[float, float]:
    """RMSE ÷ reference, and its standard error by the delta method over releases."""
    mse = float(np.mean(per_release))
    se_mse = float(np.std(per_release, ddof=1) / math.sqrt(len(per_release)))
    return math.sqrt(mse) / reference, se_mse / (2 * math.sqrt(mse) * reference)


def _bootstrap_mean_se(
    squares: dict[str, list[float]], baseline: float, rng: np.random.Generator, draws: int = 400
) -> float:
    """Standard error of the mean ratio, resampling whole releases (tables are correlated)."""
    table = np.array(list(squares.values()))  # tables × releases
    releases = table.shape[1]
    means = [
        float(np.mean(np.sqrt(table[:, rng.integers(0, releases, releases)].mean(axis=1))))
        for _ in range(draws)
    ]
    return float(np.std(means, ddof=1)) / baseline


def evaluate(name: str, raw: dict, data: Path, releases: int, seed: int) -> None:
    plan = parse_plan(with_defaults(raw), base_dir=data.parent)
    truth = count(load_data(data, plan), plan)
    allocation = allocate(plan)
    k = len(plan.tables)
    baseline = math.sqrt(discrete_laplace_variance(k / 1.0))  # ε/k each, L1 = 1
    rng = np.random.default_rng(seed)
    # per release and table, the mean squared error of its cells: the spread across releases
    # gives each ratio's standard error whatever the noise's tails (Laplace: kurtosis 6)
    squares: dict[str, list[float]] = {t.name: [] for t in allocation.tables}
    totals = []
    by_class = {c: [0.0, 0] for c in SIZE_CLASSES}
    start = time.perf_counter()
    for _ in range(releases):
        drawn = draw_preview(plan, truth, allocation, rng)
        for table in drawn.tables:
            true = truth.counts[table.name]
            error = table.released_counts - true
            squares[table.name].append(float(np.mean(error.astype(np.float64) ** 2)))
            for low, high in SIZE_CLASSES:
                mask = (true >= low) & (true <= high)
                by_class[(low, high)][0] += float(error[mask].sum())
                by_class[(low, high)][1] += int(mask.sum())
            if table.budget.spec.by == ():
                totals.append(float(error[0]))
    seconds = (time.perf_counter() - start) / releases
    print(
        f"\n## {name}: {k} tables, accounting {allocation.accounting}, "
        f"{len(allocation.measurements)} measurements, {releases} releases "
        f"({seconds:.2f} s each)"
    )
    print(allocation.accountant_choice.summary() if allocation.accountant_choice else "")
    print(f"{'table':28} {'cells':>6} {'RMSE':>8} {'÷ DL/table':>10} {'÷ raw LS':>9} {'± SE':>6}")
    ratios = []
    for t in allocation.tables:
        rmse = math.sqrt(float(np.mean(squares[t.name])))
        ratios.append(rmse / baseline)
        vs_ls, se = _ratio_and_se(squares[t.name], t.expected_rmse)
        print(
            f"{t.name:28} {t.cells:6d} {rmse:8.2f} {rmse / baseline:10.3f} {vs_ls:9.3f} {se:6.3f}"
        )
    mean_se = _bootstrap_mean_se(squares, baseline, rng)
    expected = np.mean([t.expected_rmse for t in allocation.tables]) / baseline
    print(
        f"mean ratio {np.mean(ratios):.3f} ± {mean_se:.3f} (bootstrap SE over releases), "
        f"worst {max(ratios):.3f} (per-table discrete Laplace RMSE {baseline:.2f}; exact "
        f"expected mean before post-processing {expected:.3f})"
    )
    if totals:
        bias = float(np.mean(totals))
        se = float(np.std(totals, ddof=1) / math.sqrt(len(totals)))
        print(f"grand total: bias {bias:+.2f} persons, SE {se:.2f} ({bias / se:+.2f} SE)")
    print("bias of released cells by true cell size:")
    for (low, high), (total, cells) in by_class.items():
        if cells:
            label = f"{low}" if low == high else f"{low}–{'' if high == math.inf else high}"
            print(f"  true {label:>10}: {total / cells:+.3f} per cell over {cells} cells")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--releases", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=2026, help="numpy's seed (a benchmark only)")
    args = parser.parse_args()
    sample = ROOT / "data" / "census_sample.plan.yaml"
    evaluate(
        "bundled sample plan",
        plan_to_dict(load_plan(sample)),
        ROOT / "data" / "census_sample.csv",
        args.releases,
        args.seed,
    )
    if args.rows:
        with tempfile.TemporaryDirectory() as folder:
            data = Path(folder) / "workload.csv"
            write_sample(data, rows=args.rows, seed=1)
            raw = workload_plan_dict(data.name)
            raw["tables"].insert(0, {"name": "total", "by": []})
            evaluate(f"benchmark workload, {args.rows:,} rows", raw, data, args.releases, args.seed)


if __name__ == "__main__":
    main()
