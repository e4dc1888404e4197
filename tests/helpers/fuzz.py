"""Helpers shared by the tests (moved from test_fuzz_inputs.py)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import strategies as st

VALID_PLAN: dict[str, Any] = {
    "columns": {
        "sex": {"kind": "categorical", "domain": ["F", "M", "X"], "other": "X"},
        "age": {"kind": "numeric", "bins": [0, 18, 65, 120]},
        "region": {"kind": "categorical", "domain": ["north", "south"], "parent": None},
    },
    "tables": [
        {"name": "sex", "by": ["sex"]},
        {"name": "age_by_sex", "by": ["age", "sex"], "weight": 2},
    ],
    "budget": {"accounting": "zcdp", "epsilon": 1, "delta": 1e-9, "allocation": "optimal"},
    "postprocess": {"nonnegative": True, "integer": True, "consistent": True},
}


VALID_DATA = b"sex,age,region\nF,30,north\nM,70,south\nF,12,north\nM,44,east\n"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["sex", "age", "region", "zcdp", "pure", "advanced", "approx", "numeric"]),
)


values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def value_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the plan a mutation can touch."""
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += value_paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += value_paths(child, (*prefix, index))
    return found


def mutate_plan(plan: dict[str, Any], path: tuple[Any, ...], how: str, value: Any) -> Any:
    plan = json.loads(json.dumps(plan))
    if not path:
        return value if how == "replace" else plan
    parent = plan
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "delete":
        del parent[last]
    elif isinstance(parent, dict):  # add a key next to this one
        parent[f"{last}_extra"] = value
    else:
        parent.append(value)
    return plan


def dump_plan(plan: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(plan, allow_nan=True)
    return yaml.safe_dump(plan, allow_unicode=True)
