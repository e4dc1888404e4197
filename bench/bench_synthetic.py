"""Synthetic microdata, side by side (issue 27): the release's tables, the microdata's
tabulations, the microdata off the workload, and OpenDP's AIM and MST at the same guarantee.

    python bench/bench_synthetic.py [--rows 50000] [--epsilons 0.5 1 2] [--aim-rounds 20]
        [--mbi-python /work/venv-mbi/bin/python] [--skip-mbi] [--algorithms aim mst]
        [--only sample|census-like] [--json OUT]

Two workloads: the bundled sample plan (16 tables over 9 columns, county → state) on
data/census_sample.csv, and the census-like benchmark workload (`workload.py`: 11 tables, age
in single years, county → state) on a generated file of `--rows` rows. Each runs with zCDP
accounting at ε ∈ `--epsilons` (δ = 1e-10), the plan's other defaults, and every
post-processing step; numpy's sampler stands in for OpenDP's (same distributions; a benchmark
publishes nothing). For each:

(a) the release's tables (consistent, non-negative, integer post-processing);
(b) the tabulations of the synthetic microdata made from (a), on the same tables;
(c) that microdata on every 2-way marginal of its columns that no table determines;
(d) OpenDP's AIM (workload: the plan's tables) and MST (`opendp[mbi]`), at the same ρ, run in
    the venv that has them (`--mbi-python`) as a subprocess (`synthetic_mbi_runner.py`), their
    synthetic records tabulated on the same queries.

Errors against the true counts: on the workload, the mean over tables of each table's RMSE
per cell; off the workload, the mean total-variation distance (Σ|x̂ − x| / 2n) over the
2-way marginals. Prints one table and optionally writes JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import workload_plan_dict

from dprelease.accounting.allocation import allocate
from dprelease.data.count import count, load_data
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_plan
from dprelease.plan.subtables import closure, determines
from dprelease.release.draw import draw_preview
from dprelease.sample.generator import sample_plan_dict, write_sample
from dprelease.synthetic.junction import microdata_columns
from dprelease.synthetic.microdata import synthesize

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "synthetic_mbi_runner.py"
STEPS = {"clamp": [0, None], "nonnegative": True, "integer": True, "consistent": True}


def bench_plan(raw: dict[str, Any], epsilon: float) -> Plan:
    raw = dict(raw)
    raw["budget"] = {"accounting": "zcdp", "epsilon": epsilon, "delta": 1e-10}
    raw["postprocess"] = dict(STEPS)
    return parse_plan(raw)


def tabulate(codes: np.ndarray, columns: list[str], plan: Plan, by: tuple[str, ...]) -> np.ndarray:
    """Counts over `by` of coded records (rows with a code -1 in `by` are left out)."""
    schema = plan.schema
    cells = math.prod(schema[c].size for c in by)
    if not by:
        return np.array([float(codes.shape[0])])
    index = np.zeros(codes.shape[0], dtype=np.int64)
    keep = np.ones(codes.shape[0], dtype=bool)
    for name in by:
        column = codes[:, columns.index(name)]
        keep &= column >= 0
        index = index * schema[name].size + np.maximum(column, 0)
    return np.bincount(index[keep], minlength=cells).astype(np.float64)


def rmse(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate.astype(np.float64) - truth) ** 2)))


def tvd(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.abs(estimate.astype(np.float64) - truth).sum() / (2 * truth.sum()))


def off_workload_pairs(plan: Plan, columns: list[str]) -> list[tuple[str, str]]:
    """2-way marginals of the microdata's columns that no published table determines (a pair
    of a column and its own ancestor is implied by the hierarchy and left out)."""
    pairs = []
    for a, b in itertools.combinations(columns, 2):
        if a in closure(plan.schema, (b,)) or b in closure(plan.schema, (a,)):
            continue
        if any(determines(plan.schema, spec.by, (a, b)) for spec in plan.tables):
            continue
        pairs.append((a, b))
    return pairs


def run_mbi(
    python: str, algorithm: str, codes: np.ndarray, columns: list[str], plan: Plan, rho: float,
    rounds: int,
) -> tuple[np.ndarray | None, float]:  # fmt: skip
    """Synthetic records from AIM or MST (None when the run fails), and its seconds."""
    sizes = [plan.schema[c].size for c in columns]
    queries = [",".join(spec.by) for spec in plan.tables if spec.by]
    with tempfile.TemporaryDirectory() as folder:
        given, out = Path(folder) / "in.npz", Path(folder) / "out.npy"
        np.savez(
            given, codes=codes, columns=np.array(columns), sizes=np.array(sizes), rho=rho,
            algorithm=algorithm, queries=np.array(queries), rounds=rounds,
        )  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(
            [python, str(RUNNER), str(given), str(out)], capture_output=True, text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"}, timeout=7200,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(f"{algorithm} failed: {done.stderr[-600:]}", file=sys.stderr)
            return None, seconds
        return np.load(out), seconds


def one_case(
    name: str, raw: dict[str, Any], epsilon: float, args: argparse.Namespace, seed: int
) -> dict[str, Any]:
    plan = bench_plan(raw, epsilon)
    synthetic_plan = dataclasses.replace(
        plan, postprocess=dataclasses.replace(plan.postprocess, synthetic=True)
    )
    encoded = load_data(plan.data_path, plan)  # type: ignore[arg-type]
    truth = count(encoded, plan)
    columns = list(microdata_columns(plan))
    true_codes = np.stack([encoded.codes[c].astype(np.int64) for c in columns], axis=1)
    allocation = allocate(plan)
    rng = np.random.default_rng(seed)
    preview = draw_preview(plan, truth, allocation, rng)  # (a)
    released = {t.name: t.released_counts for t in preview.tables}
    start = time.perf_counter()
    microdata = synthesize(synthetic_plan, released, np.random.default_rng(seed + 1))  # (b)
    synth_seconds = time.perf_counter() - start
    pairs = off_workload_pairs(plan, columns)
    true_pairs = {p: tabulate(true_codes, columns, plan, p) for p in pairs}

    def workload_error(get: Any) -> float:
        return float(np.mean([rmse(get(s), truth.counts[s.name]) for s in plan.tables]))

    def off_error(codes: np.ndarray) -> float:
        return float(
            np.mean([tvd(tabulate(codes, columns, plan, p), true_pairs[p]) for p in pairs])
        )

    mine = np.asarray(microdata.codes, dtype=np.int64)
    result: dict[str, Any] = {
        "workload": name,
        "epsilon": epsilon,
        "rho": allocation.total.rho,
        "tables": len(plan.tables),
        "pairs_off_workload": len(pairs),
        "a_release": workload_error(lambda s: released[s.name]),
        "b_microdata": workload_error(lambda s: tabulate(mine, columns, plan, s.by)),
        "b_unmatched_tables": len(microdata.mismatches),
        "c_microdata_off": off_error(mine),
        "synthesize_seconds": synth_seconds,
    }
    for algorithm in args.algorithms:
        if args.skip_mbi:
            continue
        records, seconds = run_mbi(
            args.mbi_python, algorithm, true_codes, columns, plan, float(allocation.total.rho or 0),
            args.aim_rounds,
        )  # fmt: skip
        result[f"{algorithm}_seconds"] = seconds
        if records is None:
            continue
        result[f"{algorithm}_workload"] = workload_error(
            lambda s, r=records: tabulate(r, columns, plan, s.by)
        )
        result[f"{algorithm}_off"] = off_error(records)
    return result


def workloads(rows: int, folder: Path) -> dict[str, dict[str, Any]]:
    generated = folder / "census_like.csv"
    write_sample(generated, rows, seed=2020)
    census_like = workload_plan_dict(str(generated))
    return {
        "sample": sample_plan_dict(str(ROOT / "data" / "census_sample.csv")),
        "census-like": census_like,
    }


def show(results: list[dict[str, Any]]) -> None:
    header = (
        f"{'workload':<12} {'ε':>4} {'(a) release':>12} {'(b) microdata':>14} {'b/a':>6} "
        f"{'AIM':>8} {'MST':>8} | {'(c) off TVD':>11} {'AIM off':>8} {'MST off':>8}"
    )
    print(header)
    for r in results:

        def cell(key: str, digits: str = ".2f", r: dict[str, Any] = r) -> str:
            return format(r[key], digits) if key in r else "—"

        print(
            f"{r['workload']:<12} {r['epsilon']:>4g} {cell('a_release'):>12} "
            f"{cell('b_microdata'):>14} {r['b_microdata'] / r['a_release']:>6.3f} "
            f"{cell('aim_workload'):>8} {cell('mst_workload'):>8} | "
            f"{cell('c_microdata_off', '.4f'):>11} {cell('aim_off', '.4f'):>8} "
            f"{cell('mst_off', '.4f'):>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--aim-rounds", type=int, default=20)
    parser.add_argument("--mbi-python", default="/work/venv-mbi/bin/python")
    parser.add_argument("--skip-mbi", action="store_true")
    parser.add_argument("--algorithms", nargs="+", choices=["aim", "mst"], default=["aim", "mst"])
    parser.add_argument("--only", choices=["sample", "census-like"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for name, raw in workloads(args.rows, Path(folder)).items():
            if args.only and name != args.only:
                continue
            for at, epsilon in enumerate(args.epsilons):
                results.append(one_case(name, raw, epsilon, args, seed=100 + at))
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)
                if args.json:
                    args.json.write_text(json.dumps(results, indent=2) + "\n")
    show(results)


if __name__ == "__main__":
    main()
