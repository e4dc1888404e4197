"""Regression and PCA on 1 M rows (issue 28's Speed line: a regression in ≤ 10 s).

Synthetic census-like rows (age, hours, income, employed), seeded; each figure is the median
of --repeats timed runs of the secure release (OS CSPRNG noise) from the rows in memory:

1. linear regression of income on age and hours (noisy moments, ridge fix, coefficients, and
   their bootstrap margins, 400 draws), pure ε = 1;
2. logistic regression of employed on age and hours (objective perturbation), pure ε = 1;
3. PCA, top 2 components of age, hours, income (noisy covariance, margins), pure ε = 1.

4. end to end: `python -m dprelease release` of a plan with the linear regression alone, on
   the rows written as a CSV (start-up, reading, the release, the files; --no-ledger).

It prints the time and the error against the noiseless fit on the same clamped rows.

    python bench/bench_regression.py [--rows 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.model_spec import parse_model
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.noise import secure_noisy_counts
from dprelease.stats import logistic, pca, regression
from dprelease.stats.budget import Share, StatContext

BOUNDS = {"age": [16, 95], "hours": [0, 99], "income": [0, 300000]}


def secure(true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
    """The release's secure sampler, as the release layer hands it to a statistic."""
    return secure_noisy_counts(true, noise, sens.l1, sens.l2_squared)


def rows(n: int, seed: int = 2024) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    age = rng.uniform(16, 95, n).round()
    hours = np.clip(rng.normal(38, 12, n), 0, 99).round()
    income = np.clip(800 * age + 400 * hours + rng.normal(0, 15000, n), 0, 300000).round()
    employed = (rng.random(n) < 1 / (1 + np.exp(-(-3 + 0.04 * age + 0.05 * hours)))).astype(float)
    return {"age": age, "hours": hours, "income": income, "employed": employed}


def timed(work: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    data = rows(args.rows)
    share, ctx, rng = Share("pure", epsilon=1.0), StatContext(), np.random.default_rng(1)
    print(f"{args.rows:,} rows, pure ε = 1 each, median of {args.repeats} runs")

    linear_raw = {"regression": {"y": "income", "x": ["age", "hours"]}, "bounds": BOUNDS}
    spec = parse_model(linear_raw, "b")
    lin = regression.calibrate_linear(spec, share, ctx)  # type: ignore[arg-type]
    values = np.column_stack([data["age"], data["hours"], data["income"]])

    def linear() -> tuple[np.ndarray, np.ndarray]:
        moments = regression.release_linear(values, lin, secure)
        return regression.coefficients(moments, lin), regression.coefficient_moe(
            moments, lin, 0.95, rng
        )

    seconds, (coef, moe) = timed(linear, args.repeats)
    exact = regression.exact_fit(values, lin)
    print(f"linear   {seconds:6.2f} s  coef {np.round(coef, 2)}  ±{np.round(moe, 2)}")
    print(f"         noiseless fit {np.round(exact, 2)}")

    bounds = {"age": BOUNDS["age"], "hours": BOUNDS["hours"]}
    raw = {"regression": {"y": "employed", "x": ["age", "hours"], "family": "logistic"}}
    log_spec = parse_model({**raw, "bounds": bounds}, "b")
    log = logistic.calibrate_logistic(log_spec, share, ctx)  # type: ignore[arg-type]
    log_values = np.column_stack([data["age"], data["hours"], data["employed"]])
    seconds, coef = timed(lambda: logistic.release_logistic(log_values, log), args.repeats)
    exact = logistic.exact_fit(log_values, log)
    print(f"logistic {seconds:6.2f} s  coef {np.round(coef, 4)}")
    print(f"         noiseless fit {np.round(exact, 4)}")

    pca_spec = parse_model({"pca": ["age", "hours", "income"], "k": 2, "bounds": BOUNDS}, "b")
    mech = pca.calibrate_pca(pca_spec, share, ctx)  # type: ignore[arg-type]

    def components() -> tuple[pca.Components, pca.Components]:
        moments = pca.release_pca(values, mech, secure)
        return pca.components(moments, mech), pca.components_moe(moments, mech, 0.95, rng)

    seconds, (found, margins) = timed(components, args.repeats)
    exact_pc = pca.exact_components(values, mech)
    cosine = np.abs(np.sum(found.loadings * exact_pc.loadings, axis=1))
    print(f"pca      {seconds:6.2f} s  |cos| to the noiseless components {np.round(cosine, 6)}")
    print(f"         loading margins {np.round(margins.loadings.max(axis=1), 6)}")
    end_to_end(data, linear_raw, args.repeats)


PLAN = """version: 1
columns: {{}}
tables:
  - name: income_model
    stat: {stat}
budget: {{accounting: pure, epsilon: 1}}
"""


def end_to_end(data: dict[str, np.ndarray], stat: dict[str, Any], repeats: int) -> None:
    """The CLI's release of the regression from a CSV file (a fresh process each run)."""
    import json

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        csv_path, plan_path = Path(folder) / "rows.csv", Path(folder) / "plan.yaml"
        pacsv.write_csv(pa.table(data), csv_path)
        plan_path.write_text(PLAN.format(stat=json.dumps(stat)), encoding="utf-8")

        def release() -> None:
            out = Path(tempfile.mkdtemp(dir=folder)) / "out"
            command = [sys.executable, "-m", "dprelease", "release", str(plan_path)]
            command += ["--data", str(csv_path), "--out", str(out), "--no-ledger"]
            subprocess.run(command, cwd=root, check=True, capture_output=True)

        seconds, _ = timed(release, repeats)
    print(f"release  {seconds:6.2f} s  end to end: python -m dprelease release, CSV in, files out")


if __name__ == "__main__":
    main()
