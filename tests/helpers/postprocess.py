"""Small plans with a geography hierarchy, and independent checks of the constraints."""

import itertools
from typing import Any

import numpy as np

from dprelease.accounting.allocation import allocate
from dprelease.plan.model import Postprocess
from dprelease.plan.parse import parse_plan
from dprelease.plan.schema import CategoricalColumn
from dprelease.plan.subtables import cell_map, shared_key

GEO_COLUMNS: dict[str, Any] = {
    "state": {"kind": "categorical", "domain": ["A", "B"]},
    "county": {
        "kind": "categorical",
        "domain": ["a1", "a2", "b1", "b2", "b3"],
        "parent": "state",
        "parent_map": {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "b3": "B"},
    },
    "sex": {"kind": "categorical", "domain": ["F", "M"]},
    "age": {"kind": "categorical", "domain": ["young", "mid", "old"]},
}

ONLY_CONSISTENT = Postprocess(clamp=(None, None), nonnegative=False, integer=False, consistent=True)
FULL = Postprocess(clamp=(0, None), nonnegative=True, integer=True, consistent=True)


def geo_plan(tables: list[dict[str, Any]], columns: dict[str, Any] | None = None, **budget: Any):
    raw = {
        "version": 1,
        "columns": columns or GEO_COLUMNS,
        "tables": tables,
        "budget": {
            "accounting": "zcdp",
            "epsilon": 1.0,
            "delta": 1e-10,
            "allocation": "equal",
            "strategy": "workload",
        }
        | budget,
    }
    plan = parse_plan(raw)
    return plan, allocate(plan)


def margin(plan, name: str, values: np.ndarray, key: tuple[str, ...]) -> np.ndarray:
    spec = plan.table(name)
    size = int(np.prod([plan.schema[c].size for c in key]))
    return np.bincount(cell_map(plan.schema, spec.by, key), weights=values, minlength=size)


def assert_consistent(plan, released: dict[str, np.ndarray], exact: bool) -> None:
    """Every two tables agree on the sub-table they share (exactly, or to 1e-6)."""
    for a, b in itertools.combinations(plan.tables, 2):
        key = shared_key(plan.schema, a.by, b.by)
        if key is None:  # a partial (discovered) column in one only: nothing shared
            continue
        left = margin(plan, a.name, released[a.name], key)
        right = margin(plan, b.name, released[b.name], key)
        if exact:
            assert np.array_equal(left, right), (a.name, b.name, key)
        else:
            np.testing.assert_allclose(left, right, atol=1e-6, err_msg=f"{a.name} {b.name}")


def children_sum(plan, values: np.ndarray, child: str, by: tuple[str, ...]) -> np.ndarray:
    """Independent of dprelease.plan.subtables: sum a table over `child` into its parent."""
    column = plan.schema[child]
    assert isinstance(column, CategoricalColumn) and column.parent_map is not None
    parent = plan.schema[column.parent]
    axis = by.index(child)
    shape = [plan.schema[c].size for c in by]
    cube = values.reshape(shape)
    out_shape = list(shape)
    out_shape[axis] = parent.size
    out = np.zeros(out_shape)
    for code, label in enumerate(column.labels):
        target = parent.labels.index(column.parent_map[label])
        index = [slice(None)] * len(shape)
        out_index = list(index)
        index[axis] = code
        out_index[axis] = target
        out[tuple(out_index)] += cube[tuple(index)]
    return out.ravel()
