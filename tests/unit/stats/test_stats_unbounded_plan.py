"""Issue 28.1 in plans, the CLI and the dashboard: a quantile's `method: smooth_sensitivity`
and a mean's `method: sample_and_aggregate` (names fixed in PLAN_AND_CLI.md §5), bounds
optional where the theory needs none, charged like every statistic, bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dprelease.errors import PlanError
from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan
from dprelease.stats.allocation import allocate
from helpers.app import go, open_app, submit, workspace
from helpers.cli import ROOT, run

SAMPLE = ROOT / "data" / "census_sample.csv"
MEDIAN = {"quantile": 0.5, "column": "income", "method": "smooth_sensitivity"}
MEAN = {"mean": "income", "method": "sample_and_aggregate", "bounds": [0, 10_000_000]}


def plan(accounting: str = "pure", **stats: dict[str, Any]) -> dict[str, Any]:
    budget: dict[str, Any] = {"accounting": accounting, "epsilon": 1.0}
    if accounting != "pure":
        budget["delta"] = 1e-8
    tables: list[dict[str, Any]] = [{"name": "by_sex", "by": ["sex"]}]
    tables += [{"name": n, "by": ["sex"], "stat": s} for n, s in stats.items()]
    return {
        "version": 1,
        "columns": {"sex": {"kind": "categorical", "domain": ["Female", "Male"]}},
        "tables": tables,
        "budget": budget,
    }


def test_methods_parse_without_bounds_and_round_trip() -> None:
    parsed = parse_plan(plan(median=MEDIAN, mean=MEAN))
    median, mean = (s.stat for s in parsed.statistics)
    assert (median.kind, median.method, mean.kind, mean.method) == (
        "quantile",
        "smooth_sensitivity",
        "mean",
        "sample_and_aggregate",
    )
    for fmt in ("yaml", "json"):
        again = loads_plan(dumps_plan(parsed, fmt), fmt)  # type: ignore[arg-type]
        assert again.statistics == parsed.statistics
    written = yaml.safe_load(dumps_plan(parsed))
    assert [t["stat"] for t in written["tables"][1:]] == [MEDIAN, MEAN]  # no bounds added


@pytest.mark.parametrize("accounting", ["pure", "approx", "advanced", "zcdp"])
def test_charged_like_every_statistic_and_never_over_the_total(accounting: str) -> None:
    allocation = allocate(parse_plan(plan(accounting, median=MEDIAN, mean=MEAN)))
    assert allocation.total.epsilon <= 1.0
    entries = {s.name: s.to_dict() for s in allocation.statistics}
    assert entries["median"]["mechanism"].startswith("smooth_sensitivity_")
    assert entries["mean"]["mechanism"] == "sample_and_aggregate"
    assert entries["median"]["error"]["moe_per_smooth_sensitivity"] > 0
    assert entries["mean"]["error"]["moe_rank"][0] > 0
    law = "laplace" if accounting == "approx" else "cauchy"
    assert entries["median"]["error"]["noise"] == law


@pytest.mark.parametrize(
    ("stat", "message"),
    [
        ({**MEDIAN, "bounds": [10, 0]}, "lo < hi"),
        ({"sum": "income", "bounds": [0, 1], "method": "smooth_sensitivity"}, "must be one of"),
        ({**MEDIAN, "method": "sample_and_aggregate"}, "must be one of"),
        ({"mean": "income", "method": "sample_and_aggregate"}, "needs bounds"),
        ({**MEAN, "groups": 1}, "groups must be a whole number"),
        ({**MEDIAN, "groups": 10}, "unknown keys"),
        ({**MEDIAN, "resolution": -1}, "resolution must be a number above 0"),
    ],
)
def test_bad_input_is_one_line(stat: dict[str, Any], message: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(plan(bad=stat))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _write(tmp_path: Path, raw: dict[str, Any]) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump({**raw, "data": str(SAMPLE)}))
    return path


def test_cli_releases_them_and_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    good = _write(tmp_path, plan(median=MEDIAN, mean=MEAN))
    shown = run("plan", str(good), "--json")
    assert shown.returncode == 0, shown.stderr
    kinds = {t["name"]: t["stat"] for t in json.loads(shown.stdout)["tables"] if "stat" in t}
    assert kinds == {"median": MEDIAN, "mean": MEAN}
    out = tmp_path / "out"
    done = run("release", str(good), "--out", str(out), "--no-ledger")
    assert done.returncode == 0, done.stderr
    for name in ("median", "mean"):
        lines = (out / "tables" / f"{name}.csv").read_text().splitlines()
        assert lines[0] == "sex,value,moe" and len(lines) == 3
        # smooth sensitivity's and sample and aggregate's margins need the data: left empty
        assert all(line.split(",")[2] == "" for line in lines[1:])
    report = (out / "report.html").read_text()
    assert "smooth sensitivity" in report and "sample and aggregate" in report
    for bad, raw in [
        ("inverted", plan(bad={**MEDIAN, "bounds": [5, 1]})),
        ("method", plan(bad={"sum": "income", "bounds": [0, 1], "method": "smooth_sensitivity"})),
        ("epsilon", {**plan(median=MEDIAN), "budget": {"accounting": "pure", "epsilon": 500}}),
    ]:
        failed = run("plan", str(_write(tmp_path, raw)))
        assert failed.returncode == 2, bad
        assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, bad


def test_dashboard_adds_a_method_and_refuses_one_that_does_not_apply() -> None:
    app = go(open_app(), "pages/tables.py")
    app.selectbox(key="new_stat_kind").set_value("sum")
    app.text_input(key="new_stat_column").set_value("age")
    app.selectbox(key="new_stat_method").set_value("smooth_sensitivity")
    submit(app, "add_statistic_form")
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "must be one of clamped" in errors[0]
    assert not any("stat" in t for t in workspace(app).plan["tables"])
    app.selectbox(key="new_stat_kind").set_value("quantile")
    app.text_input(key="new_stat_column").set_value("age")
    app.selectbox(key="new_stat_method").set_value("smooth_sensitivity")
    submit(app, "add_statistic_form")
    assert not app.error, [e.value for e in app.error]
    added = workspace(app).plan["tables"][-1]["stat"]
    assert added["method"] == "smooth_sensitivity"
    go(app, "pages/budget.py")
    assert not app.exception and not app.error, [e.value for e in app.error]
    shown = " ".join(m.value for m in app.markdown)
    assert "How each statistic is computed" in shown and "smooth sensitivity" in shown
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    name = workspace(app).plan["tables"][-1]["name"]
    errors = workspace(app).preview.statistic_errors[name]
    assert set(errors[0]) == {"±value q=0.5"} and errors[0]["±value q=0.5"] > 0
    assert "How each statistic is computed" in " ".join(m.value for m in app.markdown)
