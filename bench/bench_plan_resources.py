"""The resource bound on every plan (issue 25 point 1): how long and how much memory `plan`
takes on many small random plans, and the slowest of them.

    python bench/bench_plan_resources.py [PLANS] [SEED]

Draws PLANS random plans (default 200; tests/helpers/random_plans.py: 1–8 columns of 1–12
values, at times a hierarchy, 1–8 tables, every accountant, allocation and strategy, ε from
1e-4 to 100), allocates each in a forked child (the modules imported once, as `plan` has them
after start-up) and reports the kernel's CPU time and peak memory growth of each: median, 90th
percentile, maximum, and the five slowest plans. Then runs `python -m dprelease plan` on the
issue's two plans (one table over 14 two-valued columns; approx at ε = 0.001 over 4 tables)
and on the slowest random plan, as a user would: wall time and peak RSS, start-up included.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dprelease.accounting import strategy_allocation  # noqa: E402, F401
from dprelease.accounting.dgauss_pld import _pld_module  # noqa: E402
from dprelease.plan.parse import parse_plan  # noqa: E402
from dprelease.stats.allocation import allocate  # noqa: E402
from helpers.random_plans import approx_plan, random_plan, two_valued_plan  # noqa: E402
from helpers.resources import in_child, run_plan  # noqa: E402


def summary(raw: dict) -> str:
    budget = raw["budget"]
    sizes = [len(c["domain"]) for c in raw["columns"].values()]
    widths = [len(t["by"]) for t in raw["tables"]]
    return (
        f"{budget['accounting']}/{budget['strategy']}/{budget['allocation']} "
        f"ε={budget['epsilon']:g} δ={budget.get('delta', '-')} {raw['neighbors']}; "
        f"domains {sizes}; table widths {widths}"
    )


def issue_plans() -> dict[str, dict]:
    return {
        "k = 14 two-valued columns": two_valued_plan(14),
        "approx ε = 0.001, 4 tables": approx_plan(0.001),
    }


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    import random

    draw = random.Random(seed)
    _pld_module()  # imported once: every child inherits it
    runs = []
    for _ in range(count):
        raw = random_plan(draw.randint, draw.choice, draw.uniform)
        run = in_child(lambda raw=raw: allocate(parse_plan(raw)))
        runs.append((run, raw))
    cpu = [r.cpu_seconds for r, _ in runs]
    mem = [r.growth_mb for r, _ in runs]
    codes = [r.code for r, _ in runs]
    print(
        f"{count} random plans (seed {seed}): allocated {codes.count(0)}, refused "
        f"{codes.count(2)}, failed {codes.count(1)}, killed {codes.count(None)}"
    )
    for name, values, unit in (("CPU", cpu, "s"), ("peak memory growth", mem, "MB")):
        deciles = statistics.quantiles(values, n=10)
        print(
            f"  {name}: median {statistics.median(values):.3f} {unit}, 90th percentile "
            f"{deciles[-1]:.3f} {unit}, max {max(values):.3f} {unit}"
        )
    print("the five slowest:")
    slowest = sorted(runs, key=lambda entry: -entry[0].cpu_seconds)[:5]
    for run, raw in slowest:
        print(
            f"  {run.cpu_seconds:6.2f} s CPU {run.growth_mb:6.1f} MB exit {run.code}: "
            f"{summary(raw)}"
        )
    print("`python -m dprelease plan` (start-up included; wall time on a shared machine):")
    cases = {**issue_plans(), "the slowest random plan": slowest[0][1]}
    for name, raw in cases.items():
        cli = run_plan(raw, 120.0, "--json")
        print(
            f"  {name}: exit {cli.returncode}, {cli.seconds:.2f} s wall, {cli.cpu_seconds:.2f} s "
            f"CPU, {cli.peak_mb:.0f} MB"
        )
    print(
        json.dumps(
            {
                "median_cpu_s": statistics.median(cpu),
                "max_cpu_s": max(cpu),
                "max_growth_mb": max(mem),
            }
        )
    )


if __name__ == "__main__":
    main()
