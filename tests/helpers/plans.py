"""Small plans for tests, built as the plan file's mapping."""

import copy
from typing import Any

from dprelease.plan.parse import parse_plan

BASE: dict[str, Any] = {
    "version": 1,
    "columns": {
        "sex": {"kind": "categorical", "domain": ["Female", "Male"]},
        "race": {
            "kind": "categorical",
            "domain": ["White", "Black", "Asian", "Other"],
            "other": "Other",
        },
        "age": {"kind": "numeric", "bins": [0, 18, 25, 35, 45, 55, 65, 75, 85, 120]},
    },
    "tables": [
        {"name": "sex", "by": ["sex"]},
        {"name": "age_by_sex", "by": ["age", "sex"], "weight": 4},
        {"name": "race", "by": ["race"], "weight": 9},
    ],
    "budget": {
        "accounting": "zcdp",
        "epsilon": 1.0,
        "delta": 1e-10,
        "allocation": "equal",
        "strategy": "workload",
    },
}


def plan_dict(**budget: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw["budget"].update(budget)
    return raw


def make_plan(tables: list[dict[str, Any]] | None = None, **budget: Any):
    raw = plan_dict(**budget)
    if tables is not None:
        raw["tables"] = tables
    return parse_plan(raw)
