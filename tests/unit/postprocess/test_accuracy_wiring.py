"""Issue 10 wired: the plan's defaults choose the accountant and the measurements; the release
measures them, publishes least-squares tables with their error, and keeps the old numbers
under an explicit accountant with `strategy: workload`."""

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from dprelease.accounting.allocation import allocate
from dprelease.accounting.composition import exact_sum
from dprelease.accounting.mechanisms import gaussian_sigma
from dprelease.data.count import TrueCounts
from dprelease.plan.parse import parse_plan
from dprelease.postprocess.derived import MeasurementSet, derived_postprocess
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files
from helpers.plans import plan_dict

TABLES = [
    {"name": "total", "by": []},
    {"name": "sex", "by": ["sex"]},
    {"name": "age", "by": ["age"]},
    {"name": "age_by_sex", "by": ["age", "sex"]},
    {"name": "race", "by": ["race"]},
    {"name": "race_by_sex", "by": ["race", "sex"]},
]


def auto_plan(**budget):
    raw = plan_dict()
    raw["tables"] = TABLES
    raw["budget"] = {"epsilon": 1.0, "delta": 1e-10, **budget}
    return parse_plan(raw)


def true_counts(plan, seed=3):
    rng = np.random.default_rng(seed)
    joint = rng.poisson(40, size=(9, 2, 4))  # age × sex × race
    axes = {"age": 0, "sex": 1, "race": 2}
    counts = {}
    for spec in plan.tables:
        drop = tuple(i for name, i in axes.items() if name not in spec.by)
        summed = joint.sum(axis=drop)
        kept = [name for name in axes if name in spec.by]
        order = [kept.index(name) for name in spec.by]
        counts[spec.name] = np.asarray(np.transpose(summed, order) if order else summed).reshape(-1)
    return TrueCounts(counts={k: v.astype(np.int64) for k, v in counts.items()})


def test_defaults_choose_accountant_and_measure_only_what_is_needed():
    allocation = allocate(auto_plan())
    assert allocation.strategy == "auto"
    assert allocation.accountant_choice is not None
    assert allocation.accounting == allocation.accountant_choice.winner
    measured = {m.spec.by for m in allocation.measurements}
    # the 1-way tables and the total are implied by the two 2-way tables
    assert ("sex",) not in measured and () not in measured
    out = allocation.to_dict()
    assert {"measurements", "strategy", "accountant_choice"} <= out.keys()
    for entry in out["tables"]:
        assert entry["expected_rmse"] > 0
    for entry in out["measurements"]:
        assert {"name", "by", "cells", "mechanism", "sensitivity", "noise_std"} <= entry.keys()


def test_strategy_never_worse_than_measuring_the_tables_as_listed():
    for accounting in ("pure", "zcdp", "approx"):
        auto = allocate(auto_plan(accounting=accounting))
        listed = allocate(
            auto_plan(accounting=accounting, strategy="workload", allocation="optimal")
        )
        error = sum(t.expected_rmse**2 / t.cells for t in auto.tables)
        before = sum(t.noise.variance / t.cells for t in listed.tables)
        assert error <= before * (1 + 1e-9), accounting


def test_budget_never_overspent_under_each_accountant():
    pure = allocate(auto_plan(accounting="pure"))
    assert exact_sum(m.epsilon for m in pure.measurements) <= 1
    zcdp = allocate(auto_plan(accounting="zcdp"))
    assert zcdp.total.epsilon <= 1.0 and zcdp.total.rho is not None
    assert exact_sum(m.rho for m in zcdp.measurements) <= zcdp.total.rho


def test_approx_is_one_gaussian_mechanism_checked_by_an_independent_calibration():
    allocation = allocate(auto_plan(accounting="approx"))
    sigmas = [m.noise.scale for m in allocation.measurements]
    sigma = sum(s**-2 for s in sigmas) ** -0.5  # L2 sensitivity 1 for one person
    eps = allocation.total.epsilon
    # Balle & Wang (2018), analytic Gaussian: δ(ε) = Φ(1/2σ − εσ) − e^ε Φ(−1/2σ − εσ)
    delta = norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(
        -0.5 / sigma - eps * sigma
    )
    assert eps <= 1.0 and delta <= 1e-10 * (1 + 1e-6)
    # as listed, the tables are one Gaussian too: far less noise than Σ ε_i, Σ δ_i would need
    listed = allocate(auto_plan(accounting="approx", strategy="workload", allocation="equal"))
    k = len(TABLES)
    basic = gaussian_sigma(1.0 / k, 1e-10 / k, 1.0)
    assert max(t.noise.std for t in listed.tables) < basic / 2
    assert listed.total.composition == "pld" and listed.total.epsilon <= 1.0


def test_explicit_accountant_with_workload_strategy_keeps_the_listed_numbers():
    raw = plan_dict()  # the oracle plans of the allocation tests
    plan = parse_plan(raw)
    allocation = allocate(plan)
    assert allocation.strategy == "workload" and allocation.measurements == allocation.tables
    rhos = [t.rho for t in allocation.tables]  # zcdp, equal: ρ(ε = 1, δ = 1e-10) / 3 each
    assert rhos[0] == rhos[1] == rhos[2] and rhos[0] is not None
    assert [t.expected_rmse for t in allocation.tables] == [t.noise.std for t in allocation.tables]


def test_least_squares_error_matches_the_exact_expected_rmse():
    plan = auto_plan(accounting="zcdp")
    allocation = allocate(plan)
    measurement_set = MeasurementSet(plan, allocation)
    counts = true_counts(plan)
    truths = measurement_set.true_measurements(counts.counts)
    rng = np.random.default_rng(7)
    squares = {t.name: 0.0 for t in allocation.tables}
    runs = 400
    for _ in range(runs):
        noisy = {
            m.name: truths[m.name] + rng.normal(0, m.noise.std, m.cells)
            for m in allocation.measurements
        }
        estimates = measurement_set.estimate(noisy)
        for t in allocation.tables:
            squares[t.name] += float(np.sum((estimates[t.name] - counts.counts[t.name]) ** 2))
    for t in allocation.tables:
        empirical = math.sqrt(squares[t.name] / (runs * t.cells))
        # χ² with runs·cells degrees of freedom: a 10% band is > 5 standard errors here
        assert empirical == pytest.approx(t.expected_rmse, rel=0.1), t.name


def test_grand_total_stays_unbiased_through_nonnegativity_and_rounding():
    raw = plan_dict()
    raw["tables"] = TABLES
    raw["budget"] = {"accounting": "pure", "epsilon": 0.2}
    raw["postprocess"] = {"nonnegative": True, "integer": True, "consistent": True}
    plan = parse_plan(raw)
    allocation = allocate(plan)
    rng = np.random.default_rng(11)
    joint = np.zeros((9, 2, 4), dtype=np.int64)
    joint[0, 0, 0] = 40  # sparse: nearly every cell is 0, where non-negativity pushes up
    counts = {
        "total": joint.sum().reshape(1),
        "sex": joint.sum(axis=(0, 2)),
        "age": joint.sum(axis=(1, 2)),
        "age_by_sex": joint.sum(axis=2).reshape(-1),
        "race": joint.sum(axis=(0, 1)),
        "race_by_sex": joint.sum(axis=0).T.reshape(-1),
    }
    measurement_set = MeasurementSet(plan, allocation)
    truths = measurement_set.true_measurements(counts)
    totals = []
    for _ in range(60):
        noisy = {
            m.name: truths[m.name] + m.noise.kind.preview(rng, m.noise.scale, m.cells)
            for m in allocation.measurements
        }
        estimates = measurement_set.estimate(noisy)
        released = derived_postprocess(plan, allocation, estimates, rng=rng).released_counts
        assert all((v >= 0).all() for v in released.values())
        assert released["sex"].sum() == released["total"][0] == released["age_by_sex"].sum()
        totals.append(released["total"][0])
    se = allocation.table("total").expected_rmse / math.sqrt(len(totals))
    assert abs(np.mean(totals) - 40) <= 3 * se + 0.5


def test_release_writes_measurements_moe_and_exact_raw_errors():
    raw = plan_dict()
    raw["tables"] = TABLES
    raw["budget"] = {"accounting": "pure", "epsilon": 1.0}
    raw["postprocess"] = {"nonnegative": False, "integer": False, "consistent": True}
    raw["postprocess"]["estimate"] = "least_squares"  # linear steps only: exact figures
    plan = parse_plan(raw)
    release = draw_release(plan, true_counts(plan))
    files = release_files(release)
    measured = {m.name for m in release.allocation.measurements}
    assert {f"measurements/{name}.csv" for name in measured} == {
        p for p in files if p.startswith("measurements/")
    }
    header = files["tables/sex.csv"].decode().splitlines()[0]
    assert header == "sex,count,moe"
    meta = json.loads(files["metadata.json"])
    for entry in meta["tables"]:
        assert entry["released"]["method"] == "exact"  # only linear steps: exact figures
        assert entry["released"]["standard_error"] == pytest.approx(entry["expected_rmse"])
        assert entry["accuracy"]["bias_raw"] == 0.0
    sex = release.table("sex")
    assert sex.released_counts.sum() == pytest.approx(release.table("total").released_counts[0])


def test_consistency_over_listed_tables_reports_its_exact_error():
    from dprelease.postprocess.accuracy import accuracy_after_postprocessing
    from dprelease.postprocess.pipeline import postprocess

    raw = plan_dict()
    raw["tables"] = TABLES
    raw["postprocess"] = {"nonnegative": False, "integer": False, "consistent": True}
    raw["postprocess"]["estimate"] = "least_squares"  # linear steps only: exact figures
    plan = parse_plan(raw)  # zcdp, equal, strategy: workload
    allocation = allocate(plan)
    counts = true_counts(plan)
    noisy = {t.name: counts.counts[t.name].astype(float) for t in allocation.tables}
    exact = accuracy_after_postprocessing(plan, allocation, noisy)
    assert all(a.exact for a in exact.values())
    rng = np.random.default_rng(5)
    squares = {t.name: 0.0 for t in allocation.tables}
    runs = 300
    for _ in range(runs):
        draw = {
            t.name: counts.counts[t.name] + rng.normal(0, t.noise.std, t.cells)
            for t in allocation.tables
        }
        released = postprocess(plan, allocation, draw).released_counts
        for t in allocation.tables:
            squares[t.name] += float(np.sum((released[t.name] - counts.counts[t.name]) ** 2))
    for t in allocation.tables:
        empirical = math.sqrt(squares[t.name] / (runs * t.cells))
        assert empirical == pytest.approx(exact[t.name].rmse_postprocessed, rel=0.1), t.name
        assert exact[t.name].rmse_postprocessed <= t.noise.std * (1 + 1e-9)
