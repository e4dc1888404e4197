"""Issue 16: statistics and discovered domains in plans, allocation and the CLI release."""

import json
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from dprelease.accounting.composition import epsilon_to_zcdp, exact_sum
from dprelease.errors import PlanError
from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan
from dprelease.stats.allocation import allocate
from helpers.cli import ROOT, run

SAMPLE = ROOT / "data" / "census_sample.csv"
STATS = [
    {"name": "by_sex", "by": ["sex"]},
    {"name": "by_county", "by": ["county"]},
    {
        "name": "age_quartiles_by_sex",
        "by": ["sex"],
        "stat": {"quantile": [0.25, 0.5, 0.75], "column": "age", "bounds": [0, 100]},
    },
    {"name": "income", "by": [], "stat": {"sum": "income", "bounds": [0, 500000]}},
    {
        "name": "mean_income_by_sex",
        "by": ["sex"],
        "stat": {"mean": "income", "bounds": [0, 500000]},
    },
]


def stat_plan(accounting: str = "zcdp", **extra: Any) -> dict[str, Any]:
    budget: dict[str, Any] = {"accounting": accounting, "epsilon": 1.0}
    if accounting != "pure":
        budget["delta"] = 1e-8
    return {
        "version": 1,
        "columns": {
            "sex": {"kind": "categorical", "domain": ["Female", "Male"]},
            "county": {"kind": "categorical", "domain": {"discover": {"min_count": 20}}},
        },
        "tables": [dict(t) for t in STATS],
        "budget": {**budget, **extra},
    }


def test_stat_and_discover_keys_parse_and_round_trip() -> None:
    plan = parse_plan(stat_plan())
    assert [s.name for s in plan.statistics] == [
        "age_quartiles_by_sex",
        "income",
        "mean_income_by_sex",
    ]
    assert [t.name for t in plan.tables] == ["by_sex", "by_county"]  # counts only
    quartiles = plan.statistics[0].stat
    assert quartiles.quantiles == (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))  # type: ignore[union-attr]
    assert [(d.column, d.spec.min_count) for d in plan.discoveries] == [("county", 20)]
    assert plan.schema["county"].domain_source == "discovered"
    for fmt in ("yaml", "json"):
        text = dumps_plan(plan, fmt)  # type: ignore[arg-type]
        again = loads_plan(text, fmt)  # type: ignore[arg-type]
        assert again.statistics == plan.statistics
        assert again.discoveries == plan.discoveries
        assert again.schema == plan.schema and again.tables == plan.tables
    written = yaml.safe_load(dumps_plan(plan))
    assert written["columns"]["county"]["domain"] == {"discover": {"min_count": 20}}
    assert written["tables"][2]["stat"] == STATS[2]["stat"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"stat": {"quantile": 1.5, "column": "age", "bounds": [0, 100]}}, "strictly between 0"),
        ({"stat": {"sum": "income", "bounds": [10, 0]}}, "lo < hi"),
        ({"stat": {"mean": "income"}}, "bounds must be two numbers"),
        ({"stat": {"median": "income"}}, "exactly one of quantile, sum, mean"),
        ({"stat": {"sum": "income", "bounds": [0, 1], "colour": 1}}, "unknown keys"),
        ({"stat": {"sum": "sex", "bounds": [0, 1]}, "by": ["sex"]}, "its own statistic"),
        ({"stat": {"sum": "income", "bounds": [0, 1]}, "target": {"moe": 5}}, "no `delta` or"),
        ({"stat": {"sum": "income", "bounds": [0, 1]}, "by": ["nope"]}, "does not define"),
    ],
)
def test_bad_statistics_are_one_line_errors(change: dict[str, Any], message: str) -> None:
    raw = stat_plan()
    raw["tables"][3] = {"name": "bad", "by": [], **change}
    with pytest.raises(PlanError) as caught:
        parse_plan(raw)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("domain", "message"),
    [
        ({"discover": {"min_count": 0}}, "between 1 and 1e9"),
        ({"discover": {"min_count": 2.5}}, "whole number"),
        ({"discover": {}}, "{min_count: N}"),
    ],
)
def test_bad_discover_is_refused(domain: dict[str, Any], message: str) -> None:
    raw = stat_plan()
    raw["columns"]["county"]["domain"] = domain
    with pytest.raises(PlanError) as caught:
        parse_plan(raw)
    assert message in str(caught.value)


def test_a_plan_of_statistics_only_is_a_plan() -> None:
    raw = stat_plan()
    raw["tables"] = raw["tables"][2:]
    allocation = allocate(parse_plan(raw))
    assert allocation.tables == () and len(allocation.statistics) == 3


@pytest.mark.parametrize("accounting", ["pure", "approx", "advanced", "zcdp"])
@pytest.mark.parametrize("allocation_kind", ["equal", "weighted", "optimal"])
def test_statistics_compose_with_counts_within_the_total(
    accounting: str, allocation_kind: str
) -> None:
    raw = stat_plan(accounting, allocation=allocation_kind)
    raw["tables"][4]["weight"] = 3
    if accounting == "pure":  # discovery is (ε, δ): no discovered column under pure
        raw["columns"]["county"] = {"kind": "categorical", "domain": ["06017", "06041"]}
    plan = parse_plan(raw)
    allocation = allocate(plan)
    total = allocation.total
    assert total.epsilon is not None and total.epsilon <= 1.0
    costs = [s.cost for s in allocation.statistics] + [
        d.mechanism.cost for d in allocation.discoveries
    ]
    if accounting == "zcdp":  # every ρ adds up to at most the ρ certified at the counts' δ
        rhos = [c.rho for c in costs] + [m.rho for m in allocation.measurements]
        assert exact_sum(rhos) <= Fraction(total.rho)  # type: ignore[arg-type]  (rounded up)
        conversion = total.delta - sum(c.delta or 0 for c in costs)  # type: ignore[operator]
        assert exact_sum(rhos) <= Fraction(epsilon_to_zcdp(1.0, conversion * (1 + 1e-9))[0])
    # ε adds up (basic composition) under pure; under approx the counts are one Gaussian
    # mechanism, whose (ε, δ) the total adds (checked above through total.epsilon)
    if accounting == "pure":
        epsilons = [c.epsilon for c in costs] + [m.epsilon for m in allocation.measurements]
        assert exact_sum(epsilons) <= Fraction(1)  # type: ignore[arg-type]
    if accounting != "pure":
        assert total.delta is not None and total.delta <= 1e-8
        assert all(d.mechanism.cost.delta for d in allocation.discoveries)
    if accounting == "approx":  # the statistics' δ plus the counts' one Gaussian's δ
        deltas = [c.delta or 0 for c in costs] + [
            allocation.total.delta - sum(c.delta or 0 for c in costs)
        ]
        assert exact_sum(deltas) <= Fraction(1e-8)  # type: ignore[arg-type]
    if accounting == "advanced":  # the counts' advanced bound plus the rest, basic
        rest = exact_sum(c.epsilon for c in costs)  # type: ignore[misc]
        assert rest < Fraction(1)
    shown = allocation.to_dict()
    stats = [t for t in shown["tables"] if "stat" in t]
    assert [t["name"] for t in stats] == [s.name for s in plan.statistics]
    assert all(t["stat"] for t in stats) and "discoveries" in shown


def test_weights_and_locks_of_statistics() -> None:
    raw = stat_plan("pure", allocation="weighted")
    raw["columns"]["county"] = {"kind": "categorical", "domain": ["a", "b"]}
    raw["tables"][3]["epsilon"] = 0.3  # the sum is locked
    raw["tables"][4]["weight"] = 2
    allocation = allocate(parse_plan(raw))
    by_name = {s.name: s.cost.epsilon for s in allocation.statistics}
    assert by_name["income"] == 0.3
    # 0.7 left for weights 1 (by_sex), 1 (by_county), 1 (quartiles), 2 (mean): 0.14 per weight
    assert by_name["mean_income_by_sex"] == pytest.approx(0.28)
    assert by_name["age_quartiles_by_sex"] == pytest.approx(0.14)


def test_discovery_under_pure_accounting_is_refused_clearly() -> None:
    with pytest.raises(Exception) as caught:
        allocate(parse_plan(stat_plan("pure")))
    assert "Domain discovery is (epsilon, delta)-DP" in str(caught.value)


def test_quantile_lock_under_zcdp_is_its_own_epsilon() -> None:
    raw = stat_plan()
    raw["tables"][2]["epsilon"] = 0.2
    allocation = allocate(parse_plan(raw))
    quartiles = allocation.statistics[0]
    assert quartiles.cost.rho == pytest.approx(0.2**2 / 8)
    # three quantiles compose in ρ: Σ ε_j²/8 = 0.2²/8
    epsilons = quartiles.mechanism.epsilons  # type: ignore[union-attr]
    assert float(sum(e * e for e in epsilons)) / 8 == pytest.approx(0.2**2 / 8)


def _release(tmp_path: Path, raw: dict[str, Any], *extra: str) -> tuple[Path, Any]:
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump({**raw, "data": str(SAMPLE)}), encoding="utf-8")
    out = tmp_path / "release.zip"
    result = run("release", str(plan_file), "--out", str(out), *extra)
    return out, result


def test_cli_release_with_quantiles_sum_mean_and_a_discovered_domain(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    out, result = _release(tmp_path, stat_plan(), "--ledger", str(ledger))
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(out) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    meta = json.loads(files["metadata.json"])
    quartiles = files["tables/age_quartiles_by_sex.csv"].splitlines()
    # Issue 37.5: every statistic's CSV has a `moe` column (empty for the exponential
    # mechanism's quantiles: their bound is in rank, as metadata.json's error says).
    assert quartiles[0] == "sex,quantile,value,moe" and len(quartiles) == 1 + 2 * 3
    for line in quartiles[1:]:  # a grid candidate within the bounds
        value = float(line.split(",")[2])
        assert 0 <= value <= 100 and value.is_integer()
        assert line.split(",")[3] == ""
    entries = {t["name"]: t for t in meta["tables"]}
    income = files["tables/income.csv"].splitlines()
    assert income[0] == "value,moe"
    assert float(income[1].split(",")[1]) == pytest.approx(entries["income"]["error"]["moe"])
    means = files["tables/mean_income_by_sex.csv"].splitlines()
    assert means[0] == "sex,value,moe"
    assert [m.split(",")[0] for m in means[1:]] == ["Female", "Male"]
    assert all(0 <= float(m.split(",")[1]) <= 500000 for m in means[1:])
    error = entries["mean_income_by_sex"]["error"]
    for line in means[1:]:  # wider than the sum's margin over the count, within the bounds
        moe = float(line.split(",")[2])
        assert 0 < moe <= 500000 and moe >= error["sum_moe"] / 50000
    assert "measurements/income.csv" not in files
    county = meta["columns"]["county"]
    assert county["domain_source"] == "discovered"
    assert county["discovery"]["min_count"] == 20 and county["discovery"]["threshold"] >= 20
    counties = files["tables/by_county.csv"].splitlines()
    assert [c.split(",")[0] for c in counties[1:]] == county["labels"]
    assert {t["name"]: t["cells"] for t in meta["tables"]}["by_county"] == len(county["labels"])
    stats = {t["name"]: t for t in meta["tables"] if "stat" in t}
    assert stats["income"]["file"] == "tables/income.csv"
    assert stats["age_quartiles_by_sex"]["mechanism"] == "exponential"
    assert "clamped" in stats["income"]["clamping"]
    assert meta["total"]["epsilon"] <= 1.0 and meta["total"]["delta"] <= 1e-8
    assert "Statistics" in files["report.html"] and "exponential mechanism" in files["report.html"]
    shown = run("ledger", "show", "--ledger", str(ledger), "--json")
    entry = json.loads(shown.stdout)["datasets"][0]["releases"][0]
    assert "income" in entry["tables"] and entry["epsilon"] == meta["total"]["epsilon"]


def test_cli_plan_json_lists_statistics_as_tables(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(stat_plan()), encoding="utf-8")
    result = run("plan", str(plan_file), "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    stats = {t["name"]: t for t in shown["tables"] if "stat" in t}
    assert stats["income"]["stat"] == {"sum": "income", "bounds": [0, 500000]}
    contract = {"name", "by", "cells", "mechanism", "sensitivity", "epsilon", "delta", "rho"}
    contract |= {"noise_scale", "noise_std", "moe", "moe_table"}
    assert all(contract <= set(entry) for entry in stats.values())
    assert stats["income"]["sensitivity"] == {"l1": 500000, "l2": 500000}  # m·max(|lo|, |hi|)
    assert stats["age_quartiles_by_sex"]["sensitivity"]["l1"] == 0.75  # max(q, 1 − q)
    assert len(stats["age_quartiles_by_sex"]["error"]["moe_rank"]) == 3
    assert shown["discoveries"][0]["column"] == "county"
    text = run("plan", str(plan_file))
    assert "statistic income" in text.stdout and "discovery county" in text.stdout


def test_cli_release_with_a_missing_statistic_column_is_one_line(tmp_path: Path) -> None:
    raw = stat_plan()
    raw["tables"][3]["stat"] = {"sum": "salary", "bounds": [0, 10]}
    _, result = _release(tmp_path, raw)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "salary" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_discovery_that_finds_nothing_releases_empty_tables_not_an_error() -> None:
    from dprelease.release.draw import draw_release
    from dprelease.release.export import release_files
    from dprelease.release.statistics import upload_inputs

    raw = stat_plan()
    raw["columns"]["county"]["domain"] = {"discover": {"min_count": 10**8}}
    raw["tables"].append(
        {
            "name": "m",
            "by": ["county"],
            "stat": {"quantile": 0.5, "column": "age", "bounds": [0, 9]},
        }
    )
    plan = parse_plan(raw)
    counts, source = upload_inputs(SAMPLE.read_bytes(), plan, SAMPLE.name)
    release = draw_release(plan, counts, statistics_source=source, simulations=0)
    files = release_files(release)
    assert files["tables/by_county.csv"] == b"county,count\n"
    assert files["tables/m.csv"] == b"county,value\n"
    meta = json.loads(files["metadata.json"])
    assert meta["columns"]["county"]["labels"] == []
    assert {e["name"] for e in meta["empty_tables"]} == {"by_county", "m"}
    assert release.allocation.total == allocate(plan).total  # charged in full all the same


# --- issue 24, point 5: statistics say what they use ----------------------------------------


def test_a_quantiles_resolution_is_a_plan_key_with_a_limit() -> None:
    from dprelease.limits import QUANTILE_MAX_CANDIDATES
    from dprelease.stats.quantile import candidates
    from helpers.income_data import income_plan

    default = parse_plan(income_plan()).statistics[0].stat
    assert candidates(default)[:3].tolist() == [0, 200, 400]  # today's default, unchanged
    plan = parse_plan(income_plan(resolution=1000))
    grid = candidates(plan.statistics[0].stat)
    assert grid[:3].tolist() == [0, 1000, 2000] and grid[-1] == 200000 and grid.size == 201
    written = yaml.safe_load(dumps_plan(plan))
    assert written["tables"][0]["stat"]["resolution"] == 1000
    assert loads_plan(dumps_plan(plan), "yaml").statistics == plan.statistics
    older = parse_plan(income_plan(grid_step=1000))  # the key's older name still reads
    assert older.statistics == plan.statistics
    assert QUANTILE_MAX_CANDIDATES == 10_001
    for bad, message in (
        ({"resolution": 0}, "resolution must be a number above 0"),
        ({"resolution": -5}, "resolution must be a number above 0"),
        ({"resolution": "fine"}, "must be a number"),
        ({"resolution": 1}, "give a resolution of at least 20 for bounds [0, 200000]"),
        ({"resolution": 100, "grid_step": 100}, "keep one"),
    ):
        with pytest.raises(PlanError) as caught:
            parse_plan(income_plan(**bad))
        assert message in str(caught.value) and len(str(caught.value).splitlines()) == 1


def test_cli_release_states_which_rows_a_statistic_uses_never_how_many(tmp_path: Path) -> None:
    from helpers.income_data import (
        ABOVE,
        INCOME_CSV,
        NO_NUMBER,
        ROWS,
        assert_no_count,
        income_plan,
    )

    data = tmp_path / "acs.csv"
    data.write_bytes(INCOME_CSV)
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump({**income_plan(), "data": str(data)}), encoding="utf-8")
    checked = run("validate", str(plan_file))
    # Issue 37: a statistic that leaves out more than 1% of the rows is validate's problem
    # (the dashboard asks for a confirmation), with no count; the report still says how many.
    assert checked.returncode == 2, checked.stderr
    assert "error: Statistic 'median_income' leaves out more than 1% of the rows (no number in" in (
        checked.stderr
    )
    out = tmp_path / "release.zip"
    result = run("release", str(plan_file), "--out", str(out), "--allow-left-out")
    assert result.returncode == 0, result.stderr
    for stderr in (checked.stderr, result.stderr):  # the data holder's own report
        assert (
            f"statistic 'median_income': {NO_NUMBER:,} rows left out ('PINCP' missing or not a "
            f"number), {ABOVE:,} rows outside its bounds (used as the nearest bound)" in stderr
        )
    with zipfile.ZipFile(out) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    lines = files["tables/median_income.csv"].splitlines()
    assert lines[0] == "STATE,STATE_label,value,moe"
    assert [line.split(",")[:2] for line in lines[1:]] == [["01", "Alabama"], ["06", "California"]]
    assert all(float(line.split(",")[2]) % 200 == 0 for line in lines[1:])  # on the stated grid
    meta = json.loads(files["metadata.json"])
    entry = next(t for t in meta["tables"] if t["name"] == "median_income")
    assert entry["rows_used"].startswith("median of PINCP over the rows where PINCP is a number")
    assert "missing or non-numeric value leaves its row out" in entry["rows_used"]
    assert "0, 200, 400, … up to 200000 (resolution 200)" in entry["rows_used"]
    assert entry["resolution"] == 200
    assert meta["columns"]["STATE"]["value_labels"] == {"01": "Alabama", "06": "California"}
    assert "over the rows where PINCP is a number" in files["report.html"]
    assert "<h3>STATE</h3>" in files["report.html"] and "Alabama" in files["report.html"]
    for text in files.values():
        assert_no_count(text, NO_NUMBER, ABOVE, ROWS - NO_NUMBER)
