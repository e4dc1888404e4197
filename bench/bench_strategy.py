"""Strategy selection: run time (medians) and the exact expected accuracy it buys.

    python bench/bench_strategy.py

Prints, for the bundled sample plan (16 tables) and a 50-table workload on its columns: the
time of a first selection (cache cleared) and of a what-if that changes only ε (cached), and,
at ε = 1, δ = 1e-10, per accountant the mean and worst over tables of
(expected LS per-cell RMSE ÷ per-table discrete Laplace RMSE with ε split equally).
The RMSEs are exact (no simulation, no data).
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.accounting.auto import choose_accountant
from dprelease.accounting.mechanisms.discrete_laplace import discrete_laplace_variance
from dprelease.plan.parse import load_plan
from dprelease.plan.table_spec import sensitivity
from dprelease.strategy import select as select_module
from dprelease.strategy.select import WorkloadTable, select_strategy

PLAN = Path(__file__).resolve().parent.parent / "data" / "census_sample.plan.yaml"


def clear_caches() -> None:
    for name in (
        "_model",
        "_model_over",
        "_gaussian_shape",
        "_laplace_free_shape",
        "_laplace_shape",
    ):
        getattr(select_module, name).cache_clear()


def timed(run, repeats: int = 3, fresh: bool = True) -> float:
    times = []
    for _ in range(repeats):
        if fresh:
            clear_caches()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fifty_tables(plan) -> list[WorkloadTable]:
    names = [c for c in plan.schema.names]
    pairs = [p for p in itertools.combinations(names, 2) if set(p) != {"state", "county"}]
    tables = [WorkloadTable(n, (n,)) for n in names] + [
        WorkloadTable("_by_".join(p), p) for p in pairs
    ]
    return tables[:50]


def main() -> None:
    plan = load_plan(PLAN)
    sens = sensitivity(plan.unit, plan.neighbors)
    sample = [WorkloadTable(t.name, t.by, t.weight) for t in plan.tables]
    for label, tables in (("sample (16 tables)", sample), ("50 tables", fifty_tables(plan))):
        first = timed(lambda t=tables: choose_accountant(plan.schema, t, sens, 1.0, 1e-10))
        choose_accountant(plan.schema, tables, sens, 1.0, 1e-10)
        whatif = statistics.median(
            timed(lambda e=e, t=tables: choose_accountant(plan.schema, t, sens, e, 1e-10), 1, False)
            for e in (0.5, 0.8, 2.0)
        )
        print(
            f"{label}: first selection (3 accountants) {first:.2f} s,",
            f"ε what-if {whatif * 1000:.0f} ms",
        )
        reference = math.sqrt(discrete_laplace_variance(len(tables) / 1.0))
        for accounting in ("pure", "zcdp", "approx"):
            strategy = select_strategy(plan.schema, tables, sens, accounting, 1.0, 1e-10)
            ratios = [t.expected_rmse / reference for t in strategy.tables]
            worst = max(zip(ratios, strategy.tables, strict=True), key=lambda r: r[0])
            print(
                f"  {accounting:6s} measured {len(strategy.measurements):2d}: mean ratio "
                f"{statistics.mean(ratios):.3f}, worst {worst[0]:.3f} ({worst[1].name})"
            )


if __name__ == "__main__":
    main()
