"""How fast the Budget page's table updates: parse the plan and allocate it, no data pass.

Target (issue 3): under 100 ms for 50 tables. Uses the bundled sample's columns (with its
3,143-county domain) and 50 one-, two- and three-way tables. Prints medians of 15 runs.

    python bench/bench_budget.py
"""

from __future__ import annotations

import copy
import itertools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.plan.parse import parse_plan
from dprelease.sample.generator import sample_plan_dict
from dprelease.stats.allocation import allocate

COLUMNS = ["state", "sex", "age", "race", "hispanic", "education", "tenure", "household_size"]
BUDGETS = {
    "zcdp": {"delta": 1e-10},
    "pure": {},
    "approx": {"delta": 1e-8},
    "advanced": {"delta": 1e-8},
}


def fifty_tables() -> list[dict[str, object]]:
    combos = itertools.chain.from_iterable(itertools.combinations(COLUMNS, k) for k in (1, 2, 3))
    tables = [{"name": "_".join(c), "by": list(c)} for c in itertools.islice(combos, 49)]
    return [*tables, {"name": "county", "by": ["county"]}]


def main() -> None:
    raw = sample_plan_dict()
    raw["tables"] = fifty_tables()
    print(f"{'accounting':<10} {'allocation':<9} {'tables':>6} {'median ms':>10}")
    for accounting, extra in BUDGETS.items():
        for allocation in ("equal", "weighted", "optimal"):
            plan_raw = copy.deepcopy(raw)
            plan_raw["budget"] = {
                "accounting": accounting,
                "epsilon": 1.0,
                "allocation": allocation,
                **extra,
            }
            times = []
            for _ in range(15):
                start = time.perf_counter()
                allocate(parse_plan(plan_raw))
                times.append(time.perf_counter() - start)
            print(
                f"{accounting:<10} {allocation:<9} {len(plan_raw['tables']):>6} "
                f"{statistics.median(times) * 1000:>10.1f}"
            )


if __name__ == "__main__":
    main()
