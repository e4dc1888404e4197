"""Issue 38.3: a quantile's or mean's `method: auto` (PLAN_AND_CLI.md §6) picks the method with
the least expected error from public facts only, and says which in metadata.json.

Each method is picked where it is best: the exponential mechanism on a narrow range, smooth
sensitivity on a wide public range with big public cells under (ε, δ), the clamped mean on
values near 0, sample and aggregate on birth years in [1900, 2020] (the clamped sum's noise
grows with |hi|, not with hi − lo). The same plan picks the same method on two different data
sets; the expected errors are those of the reference cell; the Budget page shows them.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan
from dprelease.plan.stat_kinds import AUTO, METHODS
from dprelease.plan.stat_spec import AutoSpec, parse_stat, stat_to_dict
from dprelease.plan.statistic_edit import METHOD_CHOICES
from dprelease.plan.summary_spec import QuantileSpec
from dprelease.stats.allocation import allocate
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.registry import kind_of
from dprelease.stats.smooth_bound import order_statistic, padded, smooth_sensitivity
from helpers.app import go, open_app, submit, workspace
from helpers.cli import run

PURE = {"accounting": "pure", "epsilon": 1.0}
APPROX = {"accounting": "approx", "epsilon": 1.0, "delta": 1e-6}
NARROW = {"quantile": 0.5, "column": "income", "bounds": [0, 100], "method": AUTO}
WIDE = {**NARROW, "bounds": [0, 10_000_000], "min_cell_rows": 1_000_000}
# smooth sensitivity's ground (issue 38.3: auto's exponential takes the finest grid, which
# wins on WIDE): ten million rows a cell spread over a billion
HUGE = {**NARROW, "bounds": [0, 1_000_000_000], "min_cell_rows": 10_000_000}
YEARS = {"mean": "income", "bounds": [1900, 2020], "method": AUTO}
NEAR_ZERO = {"mean": "income", "bounds": [0, 100], "method": AUTO}


def plan(budget: dict[str, Any], **stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": 1,
        "columns": {"sex": {"kind": "categorical", "domain": ["Female", "Male"]}},
        "tables": [{"name": n, "by": ["sex"], "stat": s} for n, s in stats.items()],
        "budget": budget,
    }


def chosen(budget: dict[str, Any], stat: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = allocate(parse_plan(plan(budget, s=stat))).to_dict()["tables"][-1]
    return entry


@pytest.mark.parametrize(
    ("budget", "stat", "method"),
    [
        (PURE, NARROW, METHODS["quantile"][0]),  # many candidates, a narrow range
        (APPROX, NARROW, METHODS["quantile"][0]),
        (PURE, WIDE, METHODS["quantile"][0]),  # Cauchy noise: heavy tails lose
        (APPROX, WIDE, METHODS["quantile"][0]),  # the finest grid beats smooth here
        (APPROX, HUGE, METHODS["quantile"][1]),  # a wide range, huge public cells, (ε, δ)
        (PURE, NEAR_ZERO, METHODS["mean"][0]),
        (PURE, YEARS, METHODS["mean"][1]),
        (APPROX, YEARS, METHODS["mean"][1]),
    ],
)
def test_auto_picks_the_method_with_the_least_expected_error(budget, stat, method) -> None:
    entry = chosen(budget, stat)
    choice = entry["method_choice"]
    assert entry["method"] == choice["chosen"] == method
    assert entry["stat"]["method"] == AUTO  # the plan as written
    errors = {c["method"]: c["expected_rmse"] for c in choice["candidates"]}
    assert set(errors) == set(METHODS[entry["kind"]]) - {AUTO}
    assert errors[method] == min(errors.values()) and all(e > 0 for e in errors.values())
    assert [c["method"] for c in choice["candidates"] if c["chosen"]] == [method]
    assert choice["cell_rows"] == stat.get("min_cell_rows", 100)
    assert choice["cell_rows_source"] == ("min_cell_rows" if "min_cell_rows" in stat else "assumed")
    assert f"{choice['cell_rows']:,} rows" in choice["assumption"]
    assert entry["epsilon"] <= 1.0 and entry["mechanism"]


def test_the_default_method_is_unchanged_and_auto_is_offered() -> None:
    assert chosen(PURE, {k: v for k, v in NARROW.items() if k != "method"})["method_choice"] is None
    assert AUTO in METHOD_CHOICES and METHOD_CHOICES[0] == "default"
    for kind in ("quantile", "mean"):
        assert METHODS[kind][-1] == AUTO and METHODS[kind][0] != AUTO


def test_auto_round_trips_and_refuses_bad_input_in_one_line() -> None:
    parsed = parse_plan(plan(PURE, wide=WIDE, years={**YEARS, "groups": 50, "sum_share": 0.6}))
    for fmt in ("yaml", "json"):
        assert loads_plan(dumps_plan(parsed, fmt), fmt).statistics == parsed.statistics  # type: ignore[arg-type]
    assert yaml.safe_load(dumps_plan(parsed))["tables"][0]["stat"] == WIDE
    for bad, message in [
        ({**NARROW, "bounds": None}, "give bounds"),
        ({**WIDE, "min_cell_rows": 0}, "min_cell_rows must be a whole number"),
        ({**WIDE, "min_cell_rows": 2.5}, "min_cell_rows must be a whole number"),
        ({**NARROW, "groups": 5}, "unknown keys"),
        ({"sum": "income", "bounds": [0, 1], "method": AUTO}, "must be one of clamped"),
    ]:
        with pytest.raises(Exception, match=message):
            parse_plan(plan(PURE, bad=bad))


def test_the_reference_cell_matches_a_simulation() -> None:
    """The expected RMSE is the simulated RMSE of the method on the reference cell (values
    spread evenly over the bounds), here for smooth sensitivity with Laplace noise."""
    spec = parse_stat({**WIDE, "bounds": [0, 1000], "min_cell_rows": 2_000}, "t")
    assert isinstance(spec, AutoSpec)
    smooth = spec.candidates[1]
    kind = kind_of(smooth)
    mech = kind.calibrate(smooth, Share("approx", epsilon=1.0, delta=1e-6), StatContext())
    expected = kind.expected_rmse(mech, 2_000)
    values = (np.arange(2_000) + 0.5) * 1000 / 2_000
    x = padded(values, 0, 1000)
    truth, r = order_statistic(x, Fraction(1, 2))
    scale = smooth_sensitivity(x, r, mech.params.beta, mech.params.steps) / mech.params.a
    z = PreviewNoise(np.random.default_rng(5)).unit_noise("laplace", 200_000)
    simulated = math.sqrt(np.mean((np.clip(truth + scale * z, 0, 1000) - truth) ** 2))
    assert expected == pytest.approx(simulated, rel=0.03)


def _data(path: Path, incomes: np.ndarray) -> Path:
    sexes = np.where(np.arange(incomes.size) % 2, "Female", "Male")
    lines = ["sex,income", *(f"{s},{v:.0f}" for s, v in zip(sexes, incomes, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_same_plan_picks_the_same_method_on_any_data(tmp_path: Path) -> None:
    """Two data sets, one plan: the same methods in metadata.json, as `plan` said."""
    rng = np.random.default_rng(0)
    first = _data(tmp_path / "one.csv", rng.lognormal(10, 1, 3_000))
    second = _data(tmp_path / "two.csv", rng.uniform(1900, 2020, 500))
    raw = plan(APPROX, wide=HUGE, years=YEARS, narrow=NARROW)
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(raw))
    planned = json.loads(run("plan", str(path), "--json").stdout)["tables"]
    methods = {t["name"]: (t["method"], t["method_choice"]) for t in planned}
    assert {n: m[0] for n, m in methods.items()} == {
        "wide": METHODS["quantile"][1],
        "years": METHODS["mean"][1],
        "narrow": METHODS["quantile"][0],
    }
    for data in (first, second):
        out = tmp_path / data.stem
        done = run("release", str(path), "--data", str(data), "--out", str(out), "--no-ledger")
        assert done.returncode == 0, done.stderr
        meta = json.loads((out / "metadata.json").read_text())
        released = {t["name"]: (t["method"], t["method_choice"]) for t in meta["tables"]}
        assert released == methods
        assert (out / "tables" / "wide.csv").read_text().startswith("sex,value,moe")


def test_the_budget_page_shows_each_methods_expected_error() -> None:
    app = go(open_app(), "pages/tables.py")
    app.selectbox(key="new_stat_kind").set_value("quantile")
    app.text_input(key="new_stat_column").set_value("age")
    app.selectbox(key="new_stat_method").set_value(AUTO)
    submit(app, "add_statistic_form")
    assert not app.error, [e.value for e in app.error]
    assert workspace(app).plan["tables"][-1]["stat"]["method"] == AUTO
    go(app, "pages/budget.py")
    assert not app.exception and not app.error, [e.value for e in app.error]
    shown = " ".join(m.value for m in app.markdown)
    assert "How each statistic is computed" in shown and "auto chose it" in shown
    assert "Expected error of each method" in shown
    tables = [t.value for t in app.table]
    rows = next(t for t in tables if "expected RMSE" in t.columns)
    assert set(rows["method"]) == {"exponential", "smooth sensitivity"}
    assert list(rows["chosen"]).count("✓") == 1
    assert all(float(v.replace(",", "").replace("\\", "")) > 0 for v in rows["expected RMSE"])


def test_auto_takes_the_finest_grid_when_no_resolution_is_given() -> None:
    """Issue 38.3: with no `resolution`, auto's exponential mechanism uses the finest grid the
    bounds allow (10,001 candidates): no rounding, and it is what beats diffprivlib's median
    on cells of 2,400 rows. The plan still reads as written (no resolution)."""
    stat = {"quantile": 0.5, "column": "income", "bounds": [0, 500_000], "method": AUTO}
    parsed = parse_plan(plan(PURE, s=stat))
    spec = parsed.statistics[0].stat
    assert isinstance(spec, AutoSpec) and spec.finest_grid
    exponential = spec.candidates[0]
    assert isinstance(exponential, QuantileSpec)
    assert (exponential.grid_step, exponential.candidate_count) == (50.0, 10_001)
    assert "resolution" not in stat_to_dict(spec)
    given = parse_plan(plan(PURE, s={**stat, "resolution": 500})).statistics[0].stat
    assert isinstance(given, AutoSpec) and not given.finest_grid
    assert given.candidates[0].grid_step == 500
