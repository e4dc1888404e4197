"""Small random plans for the resource bound (issue 25): columns, domains, tables, accountants,
budgets. Shared by the property test (hypothesis draws the choices) and the benchmark (a seeded
random.Random draws them), so both explore the same space."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from dprelease.accounting.accountants.registry import choices, takes_delta

T = TypeVar("T")

ACCOUNTINGS = choices()  # auto, then every registered accountant (the registry's order)
DELTAS = (1e-12, 1e-10, 1e-8, 1e-6)


def random_plan(
    integer: Callable[[int, int], int],
    choose: Callable[[Sequence[Any]], Any],
    uniform: Callable[[float, float], float],
) -> dict[str, Any]:
    """A plan of 1–8 columns (domains of 1–12 values, at times a two-level hierarchy) and
    1–8 tables over 0–5 of them, under any accountant, allocation and strategy, with ε from
    1e-4 to 100 (log-uniform) and δ from 1e-12 to 1e-6."""
    count = integer(1, 8)
    columns: dict[str, Any] = {}
    for i in range(count):
        columns[f"c{i}"] = {
            "kind": "categorical",
            "domain": [f"v{j}" for j in range(integer(1, 12))],
        }
    if count >= 2 and integer(0, 3) == 0:  # c1 nested in c0: a hierarchy
        parents = columns["c0"]["domain"]
        children = [f"w{j}" for j in range(integer(len(parents), 3 * len(parents)))]
        columns["c1"] = {
            "kind": "categorical",
            "domain": children,
            "parent": "c0",
            "parent_map": {c: parents[j % len(parents)] for j, c in enumerate(children)},
        }
    names = list(columns)
    tables = []
    for t in range(integer(1, 8)):
        width = integer(0, min(5, count))
        by = sorted({choose(names) for _ in range(width)}, key=names.index)
        tables.append({"name": f"t{t}", "by": by, "weight": choose([1, 1, 2, 5])})
    accounting = choose(ACCOUNTINGS)
    budget: dict[str, Any] = {
        "accounting": accounting,
        "epsilon": float(f"{10 ** uniform(-4.0, 2.0):.3g}"),
        "allocation": choose(["optimal", "optimal", "equal"]),
        "strategy": choose(["auto", "auto", "workload"]),
    }
    if takes_delta(accounting):
        budget["delta"] = choose(DELTAS)
    return {
        "version": 1,
        "unit": {"kind": "row"},
        "neighbors": choose(["add_remove", "replace"]),
        "columns": columns,
        "tables": tables,
        "budget": budget,
    }


def log_epsilon(plan: dict[str, Any]) -> float:
    return math.log10(plan["budget"]["epsilon"])


# The two reproductions (issue 25.1), for the tests and the benchmark alike.


def two_valued_plan(k: int, **budget: Any) -> dict[str, Any]:
    """One table over k two-valued columns (721 bytes of YAML at k = 14)."""
    columns = {f"c{i}": {"kind": "categorical", "domain": ["a", "b"]} for i in range(k)}
    return {
        "version": 1,
        "unit": {"kind": "row"},
        "columns": columns,
        "tables": [{"name": "t", "by": list(columns)}],
        "budget": {"epsilon": 1.0, "delta": 1e-10, **budget},
    }


def approx_plan(epsilon: float) -> dict[str, Any]:
    return {
        "version": 1,
        "unit": {"kind": "row"},
        "columns": {
            "sex": {"kind": "categorical", "domain": ["F", "M"]},
            "age": {"kind": "numeric", "bins": [0, 18, 25, 35, 45, 55, 65, 75, 85, 120]},
            "race": {"kind": "categorical", "domain": ["a", "b", "c", "d", "e"]},
            "tenure": {"kind": "categorical", "domain": ["own", "rent"]},
        },
        "tables": [{"name": c, "by": [c]} for c in ("sex", "age", "race", "tenure")],
        "budget": {"accounting": "approx", "epsilon": epsilon, "delta": 1e-10},
    }
