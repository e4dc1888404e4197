"""A small census-like plan with a sparse 3-way table, and a truth for it (issue 38.1)."""

import numpy as np

from dprelease.data.count import TrueCounts
from dprelease.plan.parse import parse_plan
from helpers.plans import plan_dict


def census_plan(estimate: str | None = None):
    raw = plan_dict()
    raw["tables"] = [
        {"name": "total", "by": []},
        {"name": "sex", "by": ["sex"]},
        {"name": "age", "by": ["age"]},
        {"name": "age_by_sex", "by": ["age", "sex"]},
        {"name": "age_by_sex_by_race", "by": ["age", "sex", "race"]},
    ]
    raw["budget"] = {"accounting": "pure", "epsilon": 1.0}
    raw["postprocess"] = {"nonnegative": True, "integer": True, "consistent": True}
    if estimate is not None:
        raw["postprocess"]["estimate"] = estimate
    return parse_plan(raw)


def census_truth(plan, seed: int = 3) -> TrueCounts:
    """A sparse 3-way table (about 6 persons a cell, some empty) and its sub-tables."""
    rng = np.random.default_rng(seed)
    joint = rng.poisson(rng.gamma(1.5, 4.0, size=(9, 2, 4))).astype(np.int64)
    tables = {
        "total": joint.sum().reshape(1),
        "sex": joint.sum(axis=(0, 2)),
        "age": joint.sum(axis=(1, 2)),
        "age_by_sex": joint.sum(axis=2).reshape(-1),
        "age_by_sex_by_race": joint.reshape(-1),
    }
    return TrueCounts({spec.name: tables[spec.name] for spec in plan.tables})
