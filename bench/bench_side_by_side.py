"""Every side-by-side of issue 38 in one command: dprelease against the peer and the goal.

    python bench/bench_side_by_side.py [--quick] [--only ldp,graph,regression,stats,synthetic]

Each `bench/sbs_*.py` module measures one comparison on generated data and returns its rows
(`rows(quick)`: comparison, metric, dprelease, peer, peer_name, goal, ahead); this script runs
them one after the other and prints one markdown table, the one in docs/benchmarks.md. The
peers are optional and not dependencies of dprelease; a module whose peer is missing says so
in its rows (NaN) and the table shows it:

    pip install pure-ldp statsmodels   # local DP (pure-ldp imports statsmodels)
    pip install diffprivlib networkx   # regression and medians; graphs

diffprivlib brings scikit-learn, which OpenDP's prelude then imports (with scipy and pandas):
install the peers in a virtualenv of their own if you time the release path there.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

MODULES = {  # the comparison's name: its module under bench/
    "ldp": "sbs_ldp",
    "graph": "sbs_graph",
    "regression": "sbs_regression",
    "stats": "sbs_stats",
    "synthetic": "sbs_synthetic",
}


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def table(rows: list[dict[str, Any]]) -> str:
    head = ["comparison", "metric", "dprelease", "peer", "peer_name", "goal", "ahead"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [_cell(row.get(key, "")) for key in head]
        ahead = row.get("ahead")  # None: a row for scale, with no goal
        cells[-1] = "—" if ahead is None else "yes" if ahead else "**no**"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def module_main(rows: Any, missing: str) -> None:
    """One `sbs_*` module run alone: `python bench/sbs_ldp.py [--quick]`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    found = rows(parser.parse_args().quick)
    if not found:
        print(missing)
        return
    print(f"peer: {found[0]['peer_name']}; metric: {found[0]['metric']}\n")
    print(table(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer seeds: a smoke run")
    parser.add_argument("--only", default=",".join(MODULES), help="comma-separated comparisons")
    args = parser.parse_args()
    found: list[dict[str, Any]] = []
    for name in args.only.split(","):
        module_name = MODULES[name.strip()]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:  # a module not landed yet, or its peer absent
            print(f"{name}: skipped ({error})", file=sys.stderr)
            continue
        start = time.perf_counter()
        rows = module.rows(args.quick)
        print(f"{name}: {len(rows)} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        found += rows
    print(table(found))
    goals = [row for row in found if row.get("ahead") is not None]
    behind = [row["comparison"] for row in goals if not row["ahead"]]
    print(f"\n{len(goals) - len(behind)} of {len(goals)} rows ahead or level", end="")
    print(f"; behind: {'; '.join(behind)}" if behind else "")


if __name__ == "__main__":
    main()
