"""Side by side (issue 38.4): Hadamard response's variance, dprelease against pure-ldp.

Both randomise the same Zipf(1.1) data (values coded in order of popularity) at the same ε and
estimate every count without post-processing. The metric is the mean over the d values of
(ĉ(v) − c(v))²/n: both estimators are unbiased, so it is the variance per respondent averaged
over the domain (it does not depend on n). Each side runs `seeds` collections; the table shows
the medians, and beside them dprelease's exact figure for the same data (`count_variances`).
"ahead" means dprelease's median is lower, or above by less than twice the two medians'
combined standard error (level within noise). The few popular values carry most of the squared
error and the counts' errors are correlated, so one collection's figure varies by ±25%: many small
collections, not a few large.

    python bench/sbs_ldp.py [--quick]

pure-ldp is not a dependency of dprelease: `pip install pure-ldp statsmodels` (its package
imports statsmodels). Without it the rows are not measured and the script says so.
"""

from __future__ import annotations

import importlib.metadata
import math
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.ldp.registry import protocol

CASES = [(100, 0.5), (100, 1.0), (100, 2.0), (100, 3.0), (100, 5.0), (1000, 1.0), (1000, 3.0)]
CASES += [(1000, 5.0), (20, 3.0)]
QUICK_CASES = [(100, 1.0), (100, 3.0), (100, 5.0)]
ZIPF = 1.1


def zipf_values(d: int, n: int, seed: int = 0) -> np.ndarray:
    """n values 0..d−1, value v with probability ∝ 1/(v+1)^1.1."""
    weights = 1 / np.arange(1, d + 1) ** ZIPF
    return np.random.default_rng(seed).choice(d, size=n, p=weights / weights.sum())


def mse_per_respondent(estimates: np.ndarray, values: np.ndarray, d: int) -> float:
    truth = np.bincount(values, minlength=d)
    return float(np.mean((np.asarray(estimates, dtype=np.float64) - truth) ** 2) / len(values))


def dprelease_runs(values: np.ndarray, epsilon: float, d: int, seeds: int) -> list[float]:
    hr = protocol("HR")
    return [
        mse_per_respondent(
            hr.estimate_counts(values, epsilon, d, np.random.default_rng(seed)), values, d
        )
        for seed in range(seeds)
    ]


def peer_name() -> str | None:
    try:
        import pure_ldp.frequency_oracles.hadamard_response  # noqa: F401
    except ImportError:
        return None
    return f"pure-ldp {importlib.metadata.version('pure-ldp')} HadamardResponse"


def peer_runs(values: np.ndarray, epsilon: float, d: int, seeds: int) -> list[float]:
    """pure-ldp's client and server, one report at a time (its interface); values as 1..d."""
    from pure_ldp.frequency_oracles.hadamard_response import (
        HadamardResponseClient,
        HadamardResponseServer,
    )

    out = []
    for seed in range(seeds):
        random.seed(seed)  # pure-ldp draws from both global generators
        np.random.seed(seed)
        server = HadamardResponseServer(epsilon, d)
        client = HadamardResponseClient(epsilon, d, server.get_hash_funcs())
        server.aggregate_all([client.privatise(int(v) + 1) for v in values])
        estimates = server.estimate_all(range(1, d + 1), suppress_warnings=True)
        out.append(mse_per_respondent(estimates, values, d))
    return out


def _median_and_se(runs: list[float]) -> tuple[float, float]:
    spread = statistics.stdev(runs) if len(runs) > 1 else 0.0
    return statistics.median(runs), 1.2533 * spread / math.sqrt(len(runs))  # median's SE


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """One row per (d, ε): the median variance per respondent of each side, and the goal."""
    name = peer_name()
    if name is None:
        return []
    hr = protocol("HR")
    n, seeds = (5_000, 10) if quick else (10_000, 50)
    out: list[dict[str, Any]] = []
    for d, epsilon in QUICK_CASES if quick else CASES:
        values = zipf_values(d, n)
        truth = np.bincount(values, minlength=d)
        ours, ours_se = _median_and_se(dprelease_runs(values, epsilon, d, seeds))
        theirs, theirs_se = _median_and_se(peer_runs(values, epsilon, d, seeds))
        level = 2 * math.hypot(ours_se, theirs_se)
        out.append(
            {
                "comparison": f"Hadamard response variance, d={d}, ε={epsilon:g}",
                "metric": f"mean (ĉ − c)²/n over the d counts, median of {seeds} runs, n={n:,}",
                "dprelease": ours,
                "dprelease_exact": float(hr.count_variances(epsilon, d, truth).mean() / n),
                "peer": theirs,
                "peer_name": name,
                "goal": "≤ pure-ldp's (general variant above ε = 1)",
                "ahead": ours <= theirs + level,
            }
        )
    return out


def main() -> None:
    from bench_side_by_side import module_main

    module_main(rows, "pure-ldp is not importable: pip install pure-ldp statsmodels")


if __name__ == "__main__":
    main()
