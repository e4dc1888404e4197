"""Per pair (issue 38.6): synthetic microdata with a budget share against OpenDP's MST and AIM
at the same guarantee, every 2-way marginal of the declared columns that no table determines.

    python bench/synthetic_pairs.py [--seeds 5] [--mbi-python /work/venv-mbi/bin/python]
        [--cache /tmp/sbs38] [--peers-only] [--json OUT]

Workloads (`sbs_synthetic._workloads`): the bundled sample plan on data/census_sample.csv,
and the sparse plan on a generated sample (50,000 rows, seed 38). Each at ε = 1 (zcdp,
δ = 1e-10, every post-processing step):

- dprelease: `postprocess.synthetic: {budget_share: 0.2}` through the release's own steps
  (the preview sampler, seeded), mean TV over `--seeds` draws;
- MST and AIM (`opendp[mbi]`, `synthetic_mbi_runner.py` in the venv that has them), at the
  plan's whole ρ (the same guarantee the release gives, tables and microdata together), on
  every declared column; AIM's workload is the plan's tables. One run each (they take
  minutes), cached in `--cache` by workload and algorithm.

A pair is "ahead" when dprelease's TV is below the better peer's by more than 0.005, "level"
within 0.005, else "behind". "linked" pairs: the true joint is far from independence
(TV ≥ 0.05 from the product of its margins) though no table holds the pair.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_synthetic import run_mbi, tabulate, tvd
from sbs_synthetic import SHARE, _pairs, _plan, _workloads

from dprelease.accounting.allocation import allocate
from dprelease.data.count import count, load_data
from dprelease.plan.synthesis import declared_columns
from dprelease.release.draw import draw_preview

LEVEL = 0.005
LINKED = 0.05
PEERS = ("mst", "aim")


def peer_records(
    name: str, raw: dict[str, Any], algorithm: str, python: str | None, cache: Path
) -> np.ndarray | None:
    """MST's or AIM's records on every declared column (cached; None when not cached and
    `python` is None, or when the run fails)."""
    path = cache / f"{name.replace(' ', '_')}_{algorithm}.npy"
    if path.exists():
        return np.load(path)
    if python is None:
        return None
    plan = _plan(raw, {"budget_share": SHARE})
    encoded = load_data(plan.data_path, plan)  # type: ignore[arg-type]
    columns = list(declared_columns(plan))
    codes = np.stack([encoded.codes[c].astype(np.int64) for c in columns], axis=1)
    rho = float(allocate(plan).total.rho or 0)
    records, seconds = run_mbi(python, algorithm, codes, columns, plan, rho, 20)
    print(f"{name} {algorithm}: {seconds:.0f} s", file=sys.stderr, flush=True)
    if records is not None:
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, records)
        (cache / f"{path.stem}.seconds").write_text(f"{seconds:.1f}\n")
    return records


def per_pair(
    name: str,
    raw: dict[str, Any],
    seeds: int,
    python: str | None,
    cache: Path,
    peers_only: bool = False,
    run: tuple[str, ...] = PEERS,
) -> list[dict[str, Any]]:
    plan = _plan(raw, {"budget_share": SHARE})
    encoded = load_data(plan.data_path, plan)  # type: ignore[arg-type]
    truth = count(encoded, plan)
    columns = list(declared_columns(plan))
    true_codes = np.stack([encoded.codes[c].astype(np.int64) for c in columns], axis=1)
    pairs = _pairs(plan)
    peers = {a: peer_records(name, raw, a, python if a in run else None, cache) for a in PEERS}
    if peers_only or (python is None and all(r is None for r in peers.values())):
        return []
    mine: dict[tuple[str, str], list[float]] = {p: [] for p in pairs}
    for seed in range(seeds):
        microdata = draw_preview(plan, truth, rng=np.random.default_rng(seed)).microdata
        assert microdata is not None
        codes = np.asarray(microdata.codes, dtype=np.int64)
        for p in pairs:
            mine[p].append(tvd(tabulate(codes, list(microdata.columns), plan, p),
                               tabulate(true_codes, columns, plan, p)))  # fmt: skip
    out = []
    for p in pairs:
        true = tabulate(true_codes, columns, plan, p)
        joint = true.reshape(plan.schema[p[0]].size, -1)
        independent = np.outer(joint.sum(1), joint.sum(0)).ravel() / true.sum()
        row: dict[str, Any] = {
            "workload": name,
            "pair": "×".join(p),
            "cells": int(true.size),
            "dependence": tvd(independent, true),
            "dprelease": float(np.mean(mine[p])),
        }
        for algorithm, records in peers.items():
            if records is not None:
                row[algorithm] = tvd(tabulate(records, columns, plan, p), true)
        found = [row[a] for a in PEERS if a in row]
        if found:
            gap = row["dprelease"] - min(found)
            row["verdict"] = "ahead" if gap < -LEVEL else "level" if gap <= LEVEL else "behind"
        out.append(row)
    return out


def summary(rows: list[dict[str, Any]], linked: bool = False) -> dict[str, Any]:
    """Mean TVs and the verdicts of a workload's pairs (or its linked pairs alone)."""
    group = [r for r in rows if not linked or r["dependence"] >= LINKED]
    verdicts = [r.get("verdict") for r in group]
    means = {k: float(np.mean([r[k] for r in group if k in r])) if group else float("nan")
             for k in ("dprelease", *PEERS)}  # fmt: skip
    return {"pairs": len(group), **means,
            **{v: verdicts.count(v) for v in ("ahead", "level", "behind")}}  # fmt: skip


def show(rows: list[dict[str, Any]]) -> None:
    print("| workload | pair | cells | dependence | dprelease | MST | AIM | verdict |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        cells = [f"{r.get(k, float('nan')):.3f}" for k in ("dependence", "dprelease", *PEERS)]
        print(f"| {r['workload']} | {r['pair']} | {r['cells']} | {' | '.join(cells)} | "
              f"{r.get('verdict', '—')} |")  # fmt: skip
    for name in sorted({r["workload"] for r in rows}):
        mine = [r for r in rows if r["workload"] == name]
        for label, linked in (("all", False), ("linked", True)):
            m = summary(mine, linked)
            print(f"{name}, {label} pairs ({m['pairs']}): mean TV dprelease "
                  f"{m['dprelease']:.4f}, MST {m['mst']:.4f}, AIM {m['aim']:.4f}; "
                  f"ahead {m['ahead']}, level {m['level']}, behind {m['behind']}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--mbi-python", default="/work/venv-mbi/bin/python")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/sbs38"))
    parser.add_argument("--peers-only", action="store_true")
    parser.add_argument("--only", choices=["sample plan", "sparse plan"])
    parser.add_argument("--algorithms", nargs="+", choices=PEERS, default=list(PEERS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for name, raw in _workloads(Path(folder)).items():
            if args.only and name != args.only:
                continue
            rows += per_pair(name, raw, args.seeds, args.mbi_python, args.cache,
                             args.peers_only, tuple(args.algorithms))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    show(rows)


if __name__ == "__main__":
    main()
