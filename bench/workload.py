"""The benchmark workload (issue 2) as a dprelease plan over the synthetic sample's columns.

1-way state, age (single years 0–100), sex, race, education; 2-way state×sex, age×sex,
race×hispanic, education×sex; 3-way state×race×hispanic; county×sex. ε = 1, equal, pure DP
(`BUDGETS["pure"]`), or the budget's defaults (`BUDGETS["defaults"]`: accounting, strategy and
allocation left to the plan's defaults, auto/auto/optimal, with δ = 1e-10 as the bundled
sample plan has).
"""

from __future__ import annotations

from typing import Any

from dprelease.sample.generator import sample_plan_dict

WORKLOAD = [
    ["state"], ["age"], ["sex"], ["race"], ["education"],
    ["state", "sex"], ["age", "sex"], ["race", "hispanic"], ["education", "sex"],
    ["state", "race", "hispanic"], ["county", "sex"],
]  # fmt: skip


BUDGETS: dict[str, dict[str, Any]] = {
    "pure": {"accounting": "pure", "epsilon": 1.0, "allocation": "equal"},
    "defaults": {"epsilon": 1.0, "delta": 1e-10},
}


def workload_plan_dict(data_file: str, budget: str = "pure") -> dict[str, Any]:
    """The sample plan's columns, age as single years, and the benchmark tables."""
    plan = sample_plan_dict(data_file)
    columns = plan["columns"]
    columns["age"] = {"kind": "categorical", "domain": {"range": [0, 100]}}
    used = {c for by in WORKLOAD for c in by}
    plan["columns"] = {name: spec for name, spec in columns.items() if name in used}
    plan["tables"] = [{"name": "_".join(by), "by": by} for by in WORKLOAD]
    plan["budget"] = dict(BUDGETS[budget])
    plan["postprocess"] = {"nonnegative": True, "integer": True, "consistent": False}
    return plan
