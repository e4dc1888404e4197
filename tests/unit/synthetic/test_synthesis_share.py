"""`postprocess.synthetic: {budget_share: S}` (issue 38.6): parsing, the composed spend, the
records of every declared column, exact tabulations, a linked pair no table holds, admission
and the CLI end to end."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dprelease.accounting.composition import round_down
from dprelease.admission import DataSize
from dprelease.data.count import count, load_data
from dprelease.errors import PlanError
from dprelease.plan import synthesis as extra_module
from dprelease.plan.parse import parse_plan, plan_to_dict
from dprelease.release.draw import draw_preview, draw_release
from dprelease.stats.allocation import allocate
from dprelease.synthetic import junction
from dprelease.synthetic.join import rake, round_two_way
from helpers.cli import child_env

ROOT = Path(__file__).resolve().parents[3]
LEVELS = ["a", "b", "c", "d", "e"]


def linked_data(path: Path, rows: int = 20_000, seed: int = 5) -> None:
    """x and y strongly linked (y = x nine times in ten), z and w independent of them."""
    rng = np.random.default_rng(seed)  # test data, not noise
    x = rng.integers(0, 5, rows)
    y = np.where(rng.random(rows) < 0.9, x, rng.integers(0, 5, rows))
    z = rng.integers(0, 3, rows)
    w = (z + rng.integers(0, 2, rows)) % 3
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["x", "y", "z", "w"])
        for row in zip(x, y, z, w, strict=True):
            out.writerow([LEVELS[int(v)] for v in row])


def linked_plan(data: Path, share: Any, accounting: str = "zcdp") -> dict[str, Any]:
    domain5 = {"kind": "categorical", "domain": LEVELS}
    domain3 = {"kind": "categorical", "domain": LEVELS[:3]}
    budget: dict[str, Any] = {"accounting": accounting, "epsilon": 1.0}
    if accounting != "pure":
        budget["delta"] = 1e-10
    return {
        "version": 1,
        "data": str(data),
        "columns": {"x": domain5, "y": domain5, "z": domain3, "w": domain3},
        "tables": [{"name": "x", "by": ["x"]}, {"name": "zw", "by": ["z", "w"]}],
        "budget": budget,
        "postprocess": {"synthetic": share},
    }


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("share") / "linked.csv"
    linked_data(path)
    return path


# --- parsing and validation --------------------------------------------------------------------


def test_budget_share_parses_and_writes_back(data_file: Path) -> None:
    plan = parse_plan(linked_plan(data_file, {"budget_share": 0.25}))
    assert plan.postprocess.synthetic_share == 0.25
    assert plan_to_dict(plan)["postprocess"]["synthetic"] == {"budget_share": 0.25}
    assert parse_plan(plan_to_dict(plan)) == plan
    assert plan.used_columns == ("x", "y", "z", "w")  # y is read: the synthesis measures it


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "half", {"share": 0.2}, [0.2]])
def test_budget_share_outside_zero_one_is_one_line_plan_error(data_file: Path, bad: Any) -> None:
    raw = linked_plan(data_file, {"budget_share": bad} if not isinstance(bad, dict) else bad)
    with pytest.raises(PlanError) as error:
        parse_plan(raw)
    assert "postprocess.synthetic" in str(error.value)
    assert "\n" not in str(error.value)


def test_true_keeps_no_extra_budget(data_file: Path) -> None:
    plain = parse_plan(linked_plan(data_file, True))
    assert plain.postprocess.synthetic_share is None
    assert plain.used_columns == ("x", "z", "w")
    allocation = allocate(plain)
    assert allocation.synthesis is None and "synthesis" not in allocation.to_dict()


def test_survey_weighted_tables_are_refused_with_a_share(data_file: Path) -> None:
    raw = linked_plan(data_file, {"budget_share": 0.2})
    raw["columns"]["weight"] = {"kind": "numeric", "bins": [0, 10]}
    raw["tables"][0]["survey_weight"] = {"column": "weight", "bounds": [0, 5]}
    with pytest.raises(PlanError, match="survey-weighted"):
        parse_plan(raw)


def test_a_share_with_nothing_to_measure_is_refused(data_file: Path) -> None:
    raw = linked_plan(data_file, {"budget_share": 0.2})
    raw["tables"] = [{"name": "all", "by": ["x", "y", "z", "w"]}]
    with pytest.raises(PlanError, match="nothing to measure"):
        allocate(parse_plan(raw))


# --- the composed spend ------------------------------------------------------------------------


@pytest.mark.parametrize("accounting", ["zcdp", "pure", "approx", "renyi"])
def test_composed_spend_is_the_plans_total_not_more(data_file: Path, accounting: str) -> None:
    plan = parse_plan(linked_plan(data_file, {"budget_share": 0.3}, accounting))
    allocation = allocate(plan)
    synthesis = allocation.synthesis
    assert synthesis is not None
    assert allocation.total.epsilon <= 1.0
    assert synthesis.spent <= Fraction(synthesis.share.amount)
    accountant = synthesis.share.accountant
    total, _ = accountant.statistics_total(plan.budget, None if accountant.name == "pure" else
                                           Fraction(plan.budget.delta or 0))  # fmt: skip
    if accountant.splits_delta:
        return  # its δ is split first; the guarantee's ε above is the check
    # S of the total, rounded down, then the tables take the rest
    assert Fraction(synthesis.share.amount) == Fraction(round_down(total * Fraction(3, 10)))
    unit = accountant.unit
    tables = sum(Fraction(getattr(m, unit)) for m in allocation.measurements)
    spent = tables + synthesis.spent
    assert spent <= total
    assert spent >= total * (1 - Fraction(1, 10**6))  # the whole total is used, not less


def test_selection_and_measurements_follow_the_accountant(data_file: Path) -> None:
    zcdp = allocate(parse_plan(linked_plan(data_file, {"budget_share": 0.3}))).synthesis
    pure = allocate(parse_plan(linked_plan(data_file, {"budget_share": 0.3}, "pure"))).synthesis
    assert zcdp is not None and pure is not None
    assert zcdp.pair is not None and zcdp.pair.mechanism == "discrete_gaussian"
    assert pure.pair is not None and pure.pair.mechanism == "discrete_laplace"
    # three parts: the 1-way of y, two choices (three groups: x, zw, y), two pairs
    assert zcdp.shape.new == ("y",) and zcdp.shape.joins == 2
    selection_cost = zcdp.costs[1]  # each choice ε²/8 in ρ, both together ≤ a third
    epsilon = zcdp.selection_epsilon
    assert epsilon is not None
    assert Fraction(selection_cost.amount) >= 2 * epsilon**2 / 8
    assert Fraction(selection_cost.amount) <= Fraction(zcdp.share.amount) / 3


# --- the records -------------------------------------------------------------------------------


def _draw(data_file: Path, share: Any, seed: int) -> Any:
    plan = parse_plan(linked_plan(data_file, share))
    counts = count(load_data(data_file, plan), plan)
    return plan, counts, draw_preview(plan, counts, rng=np.random.default_rng(seed))


def test_records_hold_every_column_and_tabulate_exactly(data_file: Path) -> None:
    plan, _, preview = _draw(data_file, {"budget_share": 0.3}, 1)
    microdata = preview.microdata
    assert microdata.columns == ("x", "y", "z", "w")
    for table in preview.tables:
        spec = plan.table(table.name)
        assert np.array_equal(microdata.tabulate(plan.schema, spec.by), table.released_counts)
    assert microdata.measured_columns == ("y",)
    assert len(microdata.extra_pairs) == 3  # rounds: one fewer than the columns


def _tv(joint: np.ndarray, other: np.ndarray) -> float:
    return 0.5 * float(np.abs(joint / joint.sum() - other / other.sum()).sum())


def test_a_strongly_linked_pair_no_table_holds_is_captured(data_file: Path) -> None:
    truth = None
    distances = []
    for seed in range(3):
        plan, counts, preview = _draw(data_file, {"budget_share": 0.3}, seed)
        assert ("x", "y") in preview.microdata.extra_pairs  # its score stands out
        truth = counts.counts[next(p.name for p in extra_module.extra_shape(plan).candidates
                                   if p.by == ("x", "y"))]  # fmt: skip
        distances.append(_tv(preview.microdata.tabulate(plan.schema, ("x", "y")), truth))
    assert truth is not None
    joint = truth.reshape(5, 5).astype(float)
    independent = np.outer(joint.sum(1), joint.sum(0)).ravel()
    assert _tv(independent, truth) > 0.5  # the independent product is far off
    assert max(distances) < 0.05


# --- admission ---------------------------------------------------------------------------------


def test_admission_counts_the_extra_work_before_any_charge(
    data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = parse_plan(linked_plan(data_file, {"budget_share": 0.3}))
    plain = parse_plan(linked_plan(data_file, True))
    size = DataSize(rows=20_000)
    assert (
        junction.synthetic_estimate(shared, size).work_ns
        > junction.synthetic_estimate(plain, size).work_ns
    )
    assert extra_module.extra_work(shared) > 0 == extra_module.extra_work(plain)
    monkeypatch.setattr(junction, "SYNTHETIC_FIT_WORK", extra_module.extra_work(shared) - 1)
    with pytest.raises(PlanError, match="extra pairs"):
        junction.check_model(shared)
    junction.check_model(plain)  # the same limit holds the plain fit


def test_too_many_candidate_cells_are_refused_from_the_plan(
    data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extra_module, "MAX_SYNTHETIC_CELLS", 10)
    with pytest.raises(PlanError, match="candidate"):
        junction.check_model(parse_plan(linked_plan(data_file, {"budget_share": 0.3})))


# --- two-way rounding --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_round_two_way_keeps_both_margins(seed: int) -> None:
    rng = np.random.default_rng(seed)  # test values, not noise
    rows = rng.integers(0, 50, 6)
    cols = np.bincount(rng.choice(4, int(rows.sum())), minlength=4)
    start = np.maximum(rng.normal(10, 20, (6, 4)), 0)
    raked = rake(start, rows, cols)
    whole = round_two_way(raked, rows, cols)
    assert (whole >= 0).all()
    assert np.array_equal(whole.sum(1), rows) and np.array_equal(whole.sum(0), cols)
    assert np.abs(whole - raked).max() < 2


# --- the release and the CLI -------------------------------------------------------------------


def test_release_spends_with_secure_samplers_and_says_so(data_file: Path) -> None:
    plan = parse_plan(linked_plan(data_file, {"budget_share": 0.3}))
    counts = count(load_data(data_file, plan), plan)
    release = draw_release(plan, counts, simulations=0)
    assert release.microdata is not None
    assert release.microdata.columns == ("x", "y", "z", "w")
    assert release.allocation.total.epsilon <= 1.0


def test_cli_release_end_to_end(data_file: Path, tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(linked_plan(data_file, {"budget_share": 0.2})))
    out, ledger = tmp_path / "release", tmp_path / "ledger.sqlite"
    run = subprocess.run(
        [sys.executable, "-m", "dprelease", "release", str(plan_path), "--out", str(out),
         "--ledger", str(ledger)],
        capture_output=True, text=True, env=child_env(), cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    with (out / "microdata.csv").open() as handle:
        header = next(csv.reader(handle))
    assert header == ["x", "y", "z", "w"]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["synthesis"]["budget_share"] == 0.2
    assert meta["synthesis"]["pairs"]["mechanism"] == "discrete_gaussian"
    assert meta["synthetic"]["measured_columns"] == ["y"]
    assert len(meta["synthetic"]["extra_pairs"]) == 3
    assert meta["total"]["epsilon"] <= 1.0
    assert "its own share of the budget" in (out / "report.html").read_text()
    shown = subprocess.run(
        [sys.executable, "-m", "dprelease", "ledger", "show", "--ledger", str(ledger), "--json"],
        capture_output=True, text=True, env=child_env(), cwd=ROOT, timeout=120,
    )  # fmt: skip
    (account,) = json.loads(shown.stdout)["datasets"]
    assert len(account["releases"]) == 1  # charged once, the plan's total
    assert account["spent"]["epsilon"] == pytest.approx(1.0, abs=1e-12)
    assert account["spent"]["epsilon"] <= 1.0

    bad = linked_plan(data_file, {"budget_share": 1.0})
    plan_path.write_text(json.dumps(bad))
    run = subprocess.run(
        [sys.executable, "-m", "dprelease", "plan", str(plan_path)],
        capture_output=True, text=True, env=child_env(), cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.strip().startswith("error:") and len(run.stderr.strip().splitlines()) == 1


# --- hierarchies, a grand total alone, and what the draw reads -----------------------------------


@pytest.mark.parametrize(
    ("tables", "accounting"),
    [
        ({"state", "age_by_sex"}, "pure"),  # county new, its parent state held by a table
        ({"age_by_sex", "race_by_hispanic"}, "approx"),  # state and county both new
        ({"total"}, "zcdp"),  # no column held at all
    ],
)
def test_hierarchies_and_a_grand_total_alone(tables: set[str], accounting: str) -> None:
    from dprelease.plan.subtables import ancestor_codes
    from dprelease.sample.generator import sample_plan_dict

    raw = sample_plan_dict(str(ROOT / "data" / "census_sample.csv"))
    raw["tables"] = [t for t in raw["tables"] if t["name"] in tables]
    raw["postprocess"] = {"synthetic": {"budget_share": 0.3}}
    raw["budget"] = {"accounting": accounting, "epsilon": 1.0}
    if accounting != "pure":
        raw["budget"]["delta"] = 1e-9
    plan = parse_plan(raw)
    counts = count(load_data(plan.data_path, plan), plan)
    preview = draw_preview(plan, counts, rng=np.random.default_rng(3))
    microdata = preview.microdata
    assert microdata.columns == plan.schema.names
    for table in preview.tables:
        spec = plan.table(table.name)
        assert np.array_equal(microdata.tabulate(plan.schema, spec.by), table.released_counts)
    county, state = microdata.columns.index("county"), microdata.columns.index("state")
    parents = ancestor_codes(plan.schema, "county", "state")[microdata.codes[:, county]]
    assert np.array_equal(parents, microdata.codes[:, state])  # every county in its state
    assert allocate(plan).total.epsilon <= 1.0


class _Logged(dict[str, Any]):
    """True counts that remember which tables were read."""

    read: set[str]

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def test_the_share_reads_only_its_own_tables_true_counts(data_file: Path) -> None:
    from dprelease.synthetic.measure import PreviewSynthesisNoise
    from dprelease.synthetic.microdata import synthesize_with_share

    plan, counts, preview = _draw(data_file, {"budget_share": 0.3}, 4)
    logged = _Logged(counts.counts)
    logged.read = set()
    released = {t.name: t.released_counts for t in preview.tables}
    synthesis = preview.allocation.synthesis
    noise = PreviewSynthesisNoise(np.random.default_rng(5))
    synthesize_with_share(plan, synthesis.draw, released, logged, noise)
    own = {spec.name for spec in extra_module.synthesis_tables(plan)}
    assert logged.read and logged.read <= own
