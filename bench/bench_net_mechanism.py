"""The net mechanism (Blum, Ligett & Roth 2008) against dprelease's table, on a small domain.

Domain: three binary columns a, b, c (|X| = 8). Queries: every 1-way and 2-way marginal cell,
as fractions of the n rows (6 + 12 = 18 counting queries). Both mechanisms answer all 18 at
pure ε = 1 under replace neighbours (n is public, as BLR assume):

- Net mechanism: the range R is every database of m rows over X (C(m+7, 7) of them, enumerated);
  the exponential mechanism picks y ∈ R with P(y) ∝ exp(ε·u(x, y)/(2Δu)), u(x, y) =
  −max_q |q(x) − q(y)|, Δu = 1/n (one replaced row moves a fraction by at most 1/n). Its answers
  are y's fractions. The error's distribution is computed exactly from those probabilities.
- dprelease: the plan's one table a × b × c (8 cells), its noise from `allocate` (discrete
  Laplace, L1 = 2 under replace); each marginal cell is a sum of noisy cells, divided by n.
  The error's distribution comes from --draws simulated releases (numpy, preview noise).

It prints, for each n and m, the mean and the 95th percentile of the largest error over the 18
queries (in fractions), and the net's own floor (the best y in R).

    python bench/bench_net_mechanism.py [--draws 20000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.accounting.allocation import allocate
from dprelease.plan.parse import parse_plan
from dprelease.release.noise import preview_noise

EPSILON = 1.0
POINTS = np.array(list(itertools.product([0, 1], repeat=3)))  # the 8 points of X, C order
PROBABILITIES = np.array([0.30, 0.05, 0.10, 0.05, 0.15, 0.05, 0.10, 0.20])  # the population


def queries() -> np.ndarray:
    """18 × 8 membership: every 1-way cell (column = value) and 2-way cell."""
    rows = []
    for size in (1, 2):
        for columns in itertools.combinations(range(3), size):
            for values in itertools.product([0, 1], repeat=size):
                rows.append(np.all(POINTS[:, columns] == values, axis=1))
    return np.array(rows, dtype=np.float64)


def databases(m: int) -> np.ndarray:
    """Every histogram of m rows over the 8 points (stars and bars), one per row."""
    bars = np.array(list(itertools.combinations(range(m + 7), 7)))
    edges = np.hstack([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), m + 7)])
    histograms: np.ndarray = np.diff(edges, axis=1) - 1
    return histograms


def net_mechanism(histogram: np.ndarray, m: int, q: np.ndarray) -> tuple[float, float, float]:
    """(mean, 95th percentile, floor) of the largest error, exactly, from the EM's pmf."""
    n = histogram.sum()
    truth = q @ histogram / n
    candidates = databases(m)
    errors = np.abs(candidates @ q.T / m - truth).max(axis=1)
    logits = -EPSILON * n * errors / 2  # ε·u/(2Δu) with Δu = 1/n
    weights = np.exp(logits - logits.max())
    pmf = weights / weights.sum()
    order = np.argsort(errors)
    cumulative = np.cumsum(pmf[order])
    p95 = float(errors[order][np.searchsorted(cumulative, 0.95)])
    return float(pmf @ errors), p95, float(errors.min())


def dprelease_errors(histogram: np.ndarray, q: np.ndarray, draws: int) -> tuple[float, float]:
    """(mean, 95th percentile) of the largest error of dprelease's table's marginals."""
    plan = parse_plan(
        {
            "version": 1,
            "neighbors": "replace",
            "columns": {c: {"kind": "categorical", "domain": [0, 1]} for c in "abc"},
            "tables": [{"name": "abc", "by": ["a", "b", "c"]}],
            "budget": {"accounting": "pure", "epsilon": EPSILON},
            "postprocess": {"consistent": False},
        }
    )
    noise = allocate(plan).tables[0].noise
    rng = np.random.default_rng(3)
    n = histogram.sum()
    cells = preview_noise(noise, draws * 8, rng).reshape(draws, 8)
    errors = np.abs(cells @ q.T / n).max(axis=1)
    return float(errors.mean()), float(np.quantile(errors, 0.95))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=20_000)
    args = parser.parse_args()
    q = queries()
    rng = np.random.default_rng(2024)
    print(f"pure ε = {EPSILON}, replace neighbours, {len(q)} marginal queries over |X| = 8")
    print("n       mechanism          |R|        mean max error   95th pct   net floor")
    for n in (100, 1000, 10000):
        histogram = rng.multinomial(n, PROBABILITIES)
        mean, p95 = dprelease_errors(histogram, q, args.draws)
        print(f"{n:<7} dprelease (8 cells) {'-':>9}  {mean:15.4f}  {p95:9.4f}")
        for m in (5, 10, 20):
            mean, p95, floor = net_mechanism(histogram, m, q)
            size = math.comb(m + 7, 7)
            print(f"{n:<7} net, m = {m:<9} {size:>9,}  {mean:15.4f}  {p95:9.4f}  {floor:9.4f}")


if __name__ == "__main__":
    main()
