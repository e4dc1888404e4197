"""Time the disclosure-risk measures (k, l, t, attacks) on 50,000 rows × 5 quasi-identifiers.

    python bench/bench_risk.py [--rows 50000] [--runs 7]

Reads the bundled sample (or a generated one of the asked size), times `measure_risk` (classes,
k-anonymity, l-diversity, t-closeness with equal and ordered distance, attacks) and the
generalisation search, and prints the median of the runs. Target: measures under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.data.read import read_data
from dprelease.plan.parse import load_plan
from dprelease.risk.classes import risk_input
from dprelease.risk.generalise import suggest_generalisations
from dprelease.risk.measures import measure_risk
from dprelease.sample.generator import generate_sample

ROOT = Path(__file__).resolve().parent.parent
QI = ["county", "age", "sex", "race", "hispanic"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if args.rows == 50_000:
        table = read_data(ROOT / "data" / "census_sample.csv")
    else:
        table = generate_sample(args.rows, seed=1)
    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    for sensitive in ("education", "income"):
        measures, suggestions = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            data = risk_input(table, QI, sensitive)
            report = measure_risk(data, k=5, c=2)
            measures.append(time.perf_counter() - started)
            started = time.perf_counter()
            suggest_generalisations(table, data, 5, plan)
            suggestions.append(time.perf_counter() - started)
        print(
            f"{table.num_rows:,} rows × {len(QI)} QI, sensitive {sensitive} "
            f"({report.t.ground} distance): measures median {statistics.median(measures):.3f} s, "
            f"generalisation search median {statistics.median(suggestions):.3f} s"
        )


if __name__ == "__main__":
    main()
