"""Structural zeros and invariant tables (issue 27): parsed, checked, held exactly by every
post-processing path, used by the least squares (less error), labelled in every output, and
recorded in the ledger."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math

import numpy as np
import pytest

from dprelease import cli
from dprelease.accounting.allocation import allocate
from dprelease.accounting.counted import counted_tables
from dprelease.data.count import TrueCounts
from dprelease.errors import PlanError
from dprelease.ledger.files import default_ledger_path
from dprelease.ledger.store import Ledger
from dprelease.plan.parse import dumps_plan, loads_plan, plan_to_dict
from dprelease.plan.subtables import cell_map
from dprelease.plan.zeros import zero_mask
from dprelease.postprocess.derived import MeasurementSet
from dprelease.postprocess.pipeline import postprocess
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files
from dprelease.release.noise import preview_noise

COLUMNS = ("sex", "age", "marital")
PLAN = """
columns:
  sex: {kind: categorical, domain: [F, M]}
  age: {kind: numeric, bins: [0, 15, 65, 120]}
  marital: {kind: categorical, domain: [Never, Married, Widowed]}
tables:
  - {name: total, by: []}
  - {name: age, by: [age]}
  - {name: age_by_marital, by: [age, marital]}
  - {name: sex_by_marital, by: [sex, marital]}
structural_zeros:
  - {age: ['[0, 15)'], marital: [Married, Widowed]}
budget: {epsilon: 1}
"""
ZERO_CELLS = {"age_by_marital": [1, 2]}  # [0, 15) × Married, [0, 15) × Widowed


def _plan(text: str = PLAN, **budget: object):
    plan = loads_plan(text, "yaml")
    if budget:
        plan = dataclasses.replace(plan, budget=dataclasses.replace(plan.budget, **budget))
    return plan


def _joint(seed: int = 1) -> np.ndarray:
    """Counts over sex × age × marital that respect the zero."""
    joint = np.random.default_rng(seed).poisson(40, size=(2, 3, 3)).astype(np.int64)
    joint[:, 0, 1:] = 0
    return joint


def _true_counts(plan, joint: np.ndarray) -> TrueCounts:
    out = {}
    for spec in counted_tables(plan):
        mapping = cell_map(plan.schema, COLUMNS, spec.by)
        cells = spec.cells(plan.schema)
        out[spec.name] = np.bincount(mapping, weights=joint.ravel(), minlength=cells).astype(
            np.int64
        )
    return TrueCounts(out)


def _csv_rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))


# --- the plan ---------------------------------------------------------------------------------


def test_zeros_and_invariants_are_read_and_written_back():
    text = PLAN.replace("{name: total, by: []}", "{name: total, by: [], invariant: true}")
    plan = _plan(text)
    assert [s.name for s in plan.invariants] == ["total"]
    assert "total" not in [s.name for s in plan.tables]  # no budget share
    assert plan.structural_zeros[0].to_dict() == {
        "age": ["[0, 15)"],
        "marital": ["Married", "Widowed"],
    }
    again = loads_plan(dumps_plan(plan), "yaml")
    assert again.invariants == plan.invariants
    assert again.structural_zeros == plan.structural_zeros
    # never a default: a plan that does not ask has none, and writes none
    plain = _plan(
        PLAN.replace("structural_zeros:\n  - {age: ['[0, 15)'], marital: [Married, Widowed]}\n", "")
    )
    assert not plain.invariants and not plain.structural_zeros
    assert "invariant" not in dumps_plan(plain) and "structural_zeros" not in dumps_plan(plain)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("marital: [Married, Widowed]}", "mariage: [Married]}"), "names column 'mariage'"),
        (("marital: [Married, Widowed]}", "marital: [Divorced]}"), "'Divorced' is not a value"),
        (
            ("marital: [Married, Widowed]}", "marital: [Never, Married, Widowed]}"),
            None,  # every age [0, 15) cell of age_by_marital: allowed, the other ages remain
        ),
        (
            (
                "{age: ['[0, 15)'], marital: [Married, Widowed]}",
                "{marital: [Never, Married, Widowed]}",
            ),
            "every cell of table 'age_by_marital' zero",
        ),
        (
            ("{name: age, by: [age]}", "{name: age, by: [age], invariant: true}"),
            "Table 'total' is derived from the invariant table 'age'",
        ),
        (
            ("{name: total, by: []}", "{name: total, by: [], invariant: true, epsilon: 0.5}"),
            "takes no budget",
        ),
        (
            ("{name: total, by: []}", "{name: total, by: [], invariant: true, weight: 3}"),
            "remove its weight",
        ),
        (
            ("{name: total, by: []}", "{name: total, by: [], invariant: yes please}"),
            "invariant must be true or false",
        ),
        (
            (
                "{name: age_by_marital, by: [age, marital]}",
                "{name: age_by_marital, by: [age, marital], invariant: true}",
            ),
            "has structural-zero cells",
        ),
        (("structural_zeros:\n  - {", "structural_zeros:\n  - {marital: []}\n  - {"), "non-empty"),
    ],
)
def test_bad_constraints_are_one_line_plan_errors(change, message):
    old, new = change
    assert old in PLAN
    text = PLAN.replace(old, new)
    if message is None:
        loads_plan(text, "yaml")
        return
    with pytest.raises(PlanError) as raised:
        loads_plan(text, "yaml")
    assert message in str(raised.value)
    assert all("\n" not in problem for problem in raised.value.problems)


def test_every_table_invariant_and_an_invariant_statistic_are_refused():
    every = """
columns: {sex: {kind: categorical, domain: [F, M]}}
tables: [{name: sex, by: [sex], invariant: true}]
budget: {epsilon: 1}
"""
    with pytest.raises(PlanError, match="Every table is invariant"):
        loads_plan(every, "yaml")
    statistic = every.replace(
        "tables: [{name: sex, by: [sex], invariant: true}]",
        "tables: [{name: n, by: [sex]}, {name: m, by: [sex], invariant: true,"
        " stat: {mean: age, bounds: [0, 100]}}]",
    )
    with pytest.raises(PlanError, match="a statistic cannot be invariant"):
        loads_plan(statistic, "yaml")


# --- structural zeros, exact ------------------------------------------------------------------


def _check_zeros_and_sums(plan, released: dict[str, np.ndarray]) -> None:
    for spec in plan.tables:
        mask = zero_mask(plan.schema, plan.structural_zeros, spec.by)
        assert np.all(released[spec.name][mask] == 0), spec.name
    by_marital = released["age_by_marital"].reshape(3, 3)
    assert np.array_equal(by_marital.sum(axis=1), released["age"])
    assert released["total"][0] == released["age"].sum() == released["sex_by_marital"].sum()
    assert np.array_equal(by_marital.sum(axis=0), released["sex_by_marital"].reshape(2, 3).sum(0))


@pytest.mark.parametrize("strategy", ["auto", "workload"])
def test_structural_zeros_are_released_as_0_with_margin_0_and_tables_agree(strategy):
    plan = _plan(strategy=strategy)
    release = draw_release(plan, _true_counts(plan, _joint()), simulations=3)
    released = {t.name: t.released_counts for t in release.tables}
    _check_zeros_and_sums(plan, released)
    files = release_files(release)
    rows = _csv_rows(files["tables/age_by_marital.csv"])
    for index, row in enumerate(rows):
        zero = index in ZERO_CELLS["age_by_marital"]
        assert (row["count"], row["moe"]) == ("0", "0") if zero else float(row["moe"]) > 0
    meta = json.loads(files["metadata.json"])
    assert meta["structural_zeros"] == [{"age": ["[0, 15)"], "marital": ["Married", "Widowed"]}]
    entry = next(t for t in meta["tables"] if t["name"] == "age_by_marital")
    assert entry["structural_zero_cells"] == 2 and entry["invariant"] is False
    report = files["report.html"].decode()
    assert "Structural zeros" in report and "age in [0, 15) and marital in Married" in report


def test_without_consistency_the_zero_cells_are_still_0():
    plan = _plan(strategy="workload")
    plan = dataclasses.replace(
        plan, postprocess=dataclasses.replace(plan.postprocess, consistent=False)
    )
    release = draw_release(plan, _true_counts(plan, _joint()), simulations=0)
    assert np.all(
        release.table("age_by_marital").released_counts[ZERO_CELLS["age_by_marital"]] == 0
    )


# --- structural zeros lower the error (fixed seeds: deterministic) ---------------------------

RUNS = 200


def _squared_errors(plan, joint, estimate) -> float:
    truth = _true_counts(plan, joint).counts
    allocation = allocate(plan)
    rng = np.random.default_rng(2027)
    total = 0.0
    for _ in range(RUNS):
        noisy = {
            m.name: truth_of(plan, allocation, truth, m) + preview_noise(m.noise, m.cells, rng)
            for m in allocation.measurements
        }
        result = estimate(plan, allocation, noisy)
        total += sum(float(((result[s.name] - truth[s.name]) ** 2).sum()) for s in plan.tables)
    return total / RUNS


def truth_of(plan, allocation, truth, measurement):
    if not allocation.derived:
        return truth[measurement.name]
    return MeasurementSet(plan, allocation).true_measurements(truth)[measurement.name]


def test_the_strategys_least_squares_uses_the_zeros_and_errs_less():
    """strategy: auto: the estimate from the measurements, zeros held at 0 (known cells)."""
    with_zeros = _plan(accounting="zcdp", delta=1e-9)
    without = dataclasses.replace(with_zeros, structural_zeros=())
    assert allocate(with_zeros).derived

    def estimate(plan, allocation, noisy):
        return MeasurementSet(plan, allocation).estimate(noisy)

    lower = _squared_errors(with_zeros, _joint(), estimate)
    higher = _squared_errors(without, _joint(), estimate)
    assert lower < 0.9 * higher, (lower, higher)


def test_the_consistency_steps_least_squares_uses_the_zeros_and_errs_less():
    """strategy: workload: the consistency step's WLS holds the zeros fixed."""
    with_zeros = _plan(strategy="workload", accounting="zcdp", delta=1e-9)
    without = dataclasses.replace(with_zeros, structural_zeros=())
    assert not allocate(with_zeros).derived
    plain = dataclasses.replace(with_zeros.postprocess, nonnegative=False, integer=False)

    def estimate(plan, allocation, noisy):
        return postprocess(plan, allocation, noisy, plain).released_counts

    lower = _squared_errors(with_zeros, _joint(), estimate)
    higher = _squared_errors(without, _joint(), estimate)
    assert lower < 0.9 * higher, (lower, higher)


# --- invariants ---------------------------------------------------------------------------------

INVARIANT_PLAN = PLAN.replace(
    "{name: total, by: []}", "{name: total, by: [], invariant: true}"
).replace(
    "{name: age, by: [age]}", "{name: age, by: [age]}\n  - {name: sex, by: [sex], invariant: true}"
)


@pytest.mark.parametrize("strategy", ["auto", "workload"])
def test_invariant_tables_are_exact_and_the_others_agree_with_them(strategy):
    plan = _plan(INVARIANT_PLAN, strategy=strategy)
    truth = _true_counts(plan, _joint())
    release = draw_release(plan, truth, simulations=3)
    exact = {t.name: t.released_counts for t in release.invariants}
    assert np.array_equal(exact["total"], truth.counts["total"])
    assert np.array_equal(exact["sex"], truth.counts["sex"])
    released = {t.name: t.released_counts for t in release.tables} | exact
    _check_zeros_and_sums(plan, released)
    assert np.array_equal(released["sex_by_marital"].reshape(2, 3).sum(axis=1), exact["sex"])


def test_invariant_tables_take_no_budget_the_others_get_all_of_it():
    plan = _plan(INVARIANT_PLAN, strategy="workload", accounting="pure")
    allocation = allocate(plan)
    assert [t.name for t in allocation.tables] == ["age", "age_by_marital", "sex_by_marital"]
    assert math.isclose(sum(t.epsilon for t in allocation.tables), 1.0, rel_tol=1e-9)
    assert allocation.total.epsilon == 1.0
    assert any("published exact, without noise" in note for note in allocation.advice)


def test_invariants_are_labelled_in_metadata_and_report():
    plan = _plan(INVARIANT_PLAN)
    release = draw_release(plan, _true_counts(plan, _joint()), simulations=0)
    files = release_files(release)
    meta = json.loads(files["metadata.json"])
    entry = next(t for t in meta["tables"] if t["name"] == "total")
    assert entry["invariant"] is True and entry["mechanism"] == "none"
    assert entry["epsilon"] is None and entry["moe"] == 0.0 and entry["file"] == "tables/total.csv"
    assert "outside the differential privacy guarantee" in entry["note"]
    assert meta["invariants"] == ["total", "sex"]
    assert all(t["invariant"] is False for t in meta["tables"] if t["name"] not in ("total", "sex"))
    rows = _csv_rows(files["tables/sex.csv"])
    assert [int(r["count"]) for r in rows] == list(_joint().sum(axis=(1, 2)))
    assert {r["moe"] for r in rows} == {"0"}
    assert {r["invariant"] for r in rows} == {"true"}  # issue 37.6: the CSV says it too
    noisy = _csv_rows(files["tables/age.csv"])
    assert "invariant" not in noisy[0]  # a noisy table's layout is unchanged
    report = files["report.html"].decode()
    assert "Invariant tables: exact counts, outside the guarantee" in report
    assert "every table except the invariant ones (total, sex" in report


def test_a_plan_with_invariants_reads_back_its_keys_in_plan_order_of_kinds():
    mapping = plan_to_dict(_plan(INVARIANT_PLAN))
    invariant = [t["name"] for t in mapping["tables"] if t.get("invariant")]
    assert invariant == ["total", "sex"]


# --- the command line and the ledger --------------------------------------------------------


def _write_data(path, joint: np.ndarray, plan) -> None:
    labels = [plan.schema[c].labels for c in COLUMNS]
    ages = {"[0, 15)": 7, "[15, 65)": 40, "[65, 120]": 80}
    lines = ["sex,age,marital"]
    for (i, j, k), n in np.ndenumerate(joint):
        lines += [f"{labels[0][i]},{ages[labels[1][j]]},{labels[2][k]}"] * int(n)
    path.write_text("\n".join(lines) + "\n")


def test_cli_release_holds_invariants_and_zeros_and_the_ledger_records_them(tmp_path, capsys):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(INVARIANT_PLAN)
    data = tmp_path / "data.csv"
    _write_data(data, _joint(), _plan(INVARIANT_PLAN))
    out = tmp_path / "out"
    assert cli.main(["release", str(plan_path), "--data", str(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Invariant tables (total, sex) are published exact" in printed
    meta = json.loads((out / "metadata.json").read_text())
    assert [t["name"] for t in meta["tables"] if t["invariant"]] == ["total", "sex"]
    rows = _csv_rows((out / "tables" / "age_by_marital.csv").read_bytes())
    assert [r["count"] for r in rows[1:3]] == ["0", "0"]
    entry = next(
        e
        for key, _ in Ledger(default_ledger_path()).datasets()
        for e in Ledger(default_ledger_path()).entries(key)
        if e.release_id == meta["ledger"]["release_id"]
    )
    assert entry.invariants == ("total", "sex")
    assert "total" not in entry.tables  # charged tables are the noisy ones
    assert cli.main(["ledger", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    releases = [r for d in shown["datasets"] for r in d["releases"]]
    assert any(r["invariants"] == ["total", "sex"] for r in releases)


def test_cli_refuses_a_bad_zero_in_one_line(tmp_path, capsys):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(PLAN.replace("marital: [Married, Widowed]}", "marital: [Divorced]}"))
    assert cli.main(["plan", str(plan_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "'Divorced'" in err


def test_a_simulation_that_swaps_the_measurements_still_holds_the_zeros():
    """The accuracy simulation reruns the pipeline on fresh noisy values (`measured`
    replaced): the zero cells must stay 0 and the tables consistent."""
    from dprelease.postprocess.consistency import is_consistent
    from dprelease.postprocess.pipeline import consistent_pipeline, make_problem

    plan = _plan(strategy="workload", accounting="zcdp", delta=1e-9)
    allocation = allocate(plan)
    truth = _true_counts(plan, _joint()).counts
    problem = make_problem(plan, allocation, {s.name: truth[s.name] for s in plan.tables})
    rng = np.random.default_rng(3)
    swapped = problem.measured + rng.normal(0, 5, problem.measured.size)
    for settings in (
        plan.postprocess,
        dataclasses.replace(plan.postprocess, nonnegative=False, integer=False),
    ):
        result = consistent_pipeline(dataclasses.replace(problem, measured=swapped), settings)
        released = result.released_counts
        for spec in plan.tables:
            assert np.all(
                released[spec.name][zero_mask(plan.schema, plan.structural_zeros, spec.by)] == 0
            )
        values = np.concatenate([released[n] for n in problem.names]).astype(float)
        assert is_consistent(problem.constraints, values)
