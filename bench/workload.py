"""The benchmark workload (issue 2) as a dprelease plan over the synthetic sample's columns.

1-way state, age (single years 0–100), sex, race, education; 2-way state×sex, age×sex,
race×hispanic, education×sex; 3-way state×race×hispanic; county×sex. ε = 1, equal, pure DP.
"""

from __future__ import annotations

from typing import Any

from dprelease.sample.generator import sample_plan_dict

WORKLOAD = [
    ["state"], ["age"], ["sex"], ["race"], ["education"],
    ["state", "sex"], ["age", "sex"], ["race", "hispanic"], ["education", "sex"],
    ["state", "race", "hispanic"], ["county", "sex"],
]  # fmt: skip


def workload_plan_dict(data_file: str) -> dict[str, Any]:
    """The sample plan's columns, age as single years, and the benchmark tables."""
    plan = sample_plan_dict(data_file)
    columns = plan["columns"]
    columns["age"] = {"kind": "categorical", "domain": {"range": [0, 100]}}
    used = {c for by in WORKLOAD for c in by}
    plan["columns"] = {name: spec for name, spec in columns.items() if name in used}
    plan["tables"] = [{"name": "_".join(by), "by": by} for by in WORKLOAD]
    plan["budget"] = {"accounting": "pure", "epsilon": 1.0, "allocation": "equal"}
    plan["postprocess"] = {"nonnegative": True, "integer": True, "consistent": False}
    return plan
