"""Unions of two tables as measurements (pure DP): chosen where they beat their parts, exact
in the error model, counted from the data, measured and published by the release."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprelease.accounting.mechanisms.discrete_laplace import discrete_laplace_variance
from dprelease.data.count import count, load_data
from dprelease.data.engines import count_data
from dprelease.plan.parse import parse_plan
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files
from dprelease.strategy.counted import MEASURED_PREFIX, counted_tables
from dprelease.strategy.domain import build_domain, downward_closure
from dprelease.strategy.merge import merged_epsilon_shape, union
from dprelease.strategy.residual import ErrorModel
from dprelease.strategy.select import WorkloadTable, select_strategy
from helpers.engines import ENGINES
from helpers.strategy import dense_variances, small_schema

ONE = Sensitivity(l1=1, l2_squared=1)
COLUMNS = {
    "sex": {"kind": "categorical", "domain": ["F", "M"]},
    "insurance": {"kind": "categorical", "domain": ["no", "yes"]},
    "age": {"kind": "categorical", "domain": ["a", "b", "c", "d"]},
}
TABLES = [
    {"name": "age_by_sex", "by": ["age", "sex"]},
    {"name": "age_by_insurance", "by": ["age", "insurance"]},
]


def union_plan(tmp_path: Path | None = None, **budget: object):
    raw: dict[str, object] = {
        "columns": COLUMNS,
        "tables": TABLES,
        "budget": {"accounting": "pure", "epsilon": 1.0, **budget},
    }
    if tmp_path is None:
        return parse_plan(raw)
    rng = np.random.default_rng(11)
    rows = 3_000
    pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], rows),
            "insurance": rng.choice(["no", "yes"], rows, p=[0.2, 0.8]),
            "age": rng.choice(list("abcd"), rows, p=[0.1, 0.2, 0.3, 0.4]),
        }
    ).to_csv(tmp_path / "people.csv", index=False)
    raw["data"] = "people.csv"
    return parse_plan(raw, base_dir=tmp_path)


def test_two_tables_crossed_with_binary_columns_are_measured_as_their_union() -> None:
    plan = union_plan()
    workload = [WorkloadTable(t["name"], tuple(t["by"])) for t in TABLES]
    merged = select_strategy(plan.schema, workload, ONE, "pure", 1.0)
    assert [m.by for m in merged.measurements] == [("sex", "insurance", "age")]
    assert merged.measurements[0].share == 1.0
    # each cell of age × sex sums 2 cells of the union, each with the whole ε's noise
    per_cell = 2 * discrete_laplace_variance(1.0)
    assert merged.table("age_by_sex").expected_rmse == pytest.approx(math.sqrt(per_cell))
    listed = select_strategy(plan.schema, workload, ONE, "pure", 1.0, kind="workload")
    assert merged.workload_error < 0.8 * listed.workload_error
    # the tables as listed never get a union: `strategy: workload` measures them as they are
    assert {m.by for m in listed.measurements} == {("sex", "age"), ("insurance", "age")}


def test_only_pure_auto_plans_count_a_union() -> None:
    specs = counted_tables(union_plan())
    assert [s.by for s in specs[len(TABLES) :]] == [("sex", "insurance", "age")]
    assert specs[-1].name.startswith(MEASURED_PREFIX)
    assert len(counted_tables(union_plan(strategy="workload"))) == len(TABLES)
    zcdp = union_plan(accounting="zcdp", delta=1e-10)
    assert len(counted_tables(zcdp)) == len(TABLES)


@pytest.mark.parametrize("seed", range(4))
def test_a_union_measurement_has_the_dense_least_squares_error(seed: int) -> None:
    bys = [("county", "sex"), ("sex", "age"), ("state",), ("age",), ()]
    domain = build_domain(small_schema(), bys)
    workload = tuple(domain.marginal_of(b) for b in bys)
    candidates = (
        union(workload[0], workload[1]),  # county × sex × age: no table determines it
        *downward_closure(domain, workload),
    )
    assert not any(domain.determines(b, candidates[0]) for b in workload)
    model = ErrorModel(domain, workload, candidates)
    rng = np.random.default_rng(seed)
    precisions = rng.random(len(candidates)) * (rng.random(len(candidates)) < 0.5)
    precisions[0] = 0.3
    exact = model.table_variances(precisions)
    dense, _ = dense_variances(domain, candidates, precisions, workload)
    np.testing.assert_allclose(exact, dense, rtol=1e-7)


@pytest.mark.parametrize("seed", range(25))
def test_merging_never_raises_the_error_and_keeps_unions_small(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = ("state", "county", "sex", "age")
    picked = {tuple(c for c in names if rng.random() < 0.45) for _ in range(rng.integers(2, 7))}
    bys = sorted(by for by in picked if not {"state", "county"} <= set(by))
    if len(bys) < 2:
        return
    domain = build_domain(small_schema(), bys)
    workload = tuple(domain.marginal_of(b) for b in bys)
    weights = rng.random(len(workload)) + 0.1
    candidates = downward_closure(domain, workload)
    model = ErrorModel(domain, workload, candidates)
    start = rng.random(len(candidates)) * (rng.random(len(candidates)) < 0.7)
    start = start if start.sum() > 0 else np.ones(len(candidates))
    before = model.objective((start / start.sum()) ** 2, weights)[0]
    chosen, shape = merged_epsilon_shape(domain, workload, weights, candidates, start / start.sum())
    after = ErrorModel(domain, workload, chosen).objective(shape**2, weights)[0]
    assert after <= before * (1 + 1e-12)
    assert shape.sum() == pytest.approx(1.0) and shape.min() >= 0
    largest = max(domain.marginal_cells(m) for m in workload)
    assert all(domain.marginal_cells(m) <= 4 * largest for m in chosen)


def test_the_release_counts_measures_and_publishes_from_the_union(tmp_path: Path) -> None:
    plan = union_plan(tmp_path)
    plan = parse_plan(
        {**json.loads(json.dumps(_as_dict(plan))), "postprocess": {"consistent": True}},
        base_dir=tmp_path,
    )
    counts = count(load_data(plan.data_path, plan), plan)
    union_name = next(name for name in counts.counts if name.startswith(MEASURED_PREFIX))
    assert counts.counts[union_name].sum() == 3_000
    release = draw_release(plan, counts)
    assert [m.spec.by for m in release.allocation.measurements] == [("sex", "insurance", "age")]
    files = release_files(release)
    measured = [p for p in files if p.startswith("measurements/")]
    assert measured == ["measurements/sex_by_insurance_by_age.csv"]
    # the counted union's internal name and its true counts never reach a file
    assert not any(union_name.encode() in body for body in files.values())
    age_sex = release.table("age_by_sex").released_counts.reshape(4, 2)
    age_insurance = release.table("age_by_insurance").released_counts.reshape(4, 2)
    np.testing.assert_allclose(age_sex.sum(axis=1), age_insurance.sum(axis=1))
    meta = json.loads(files["metadata.json"])
    assert [m["by"] for m in meta["measurements"]] == [["sex", "insurance", "age"]]


def _as_dict(plan: object) -> dict[str, object]:
    from dprelease.plan.parse import plan_to_dict

    return plan_to_dict(plan)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_counts_the_union(tmp_path: Path, engine: str) -> None:
    plan = union_plan(tmp_path)
    reference = count(load_data(plan.data_path, plan), plan).counts
    result = count_data(plan.data_path, plan, engine=engine).counts.counts
    assert set(result) == set(reference) and len(result) == len(TABLES) + 1
    for name, cells in reference.items():
        np.testing.assert_array_equal(result[name], cells, err_msg=name)
