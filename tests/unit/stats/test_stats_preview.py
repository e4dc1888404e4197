"""The Preview's confidential errors of statistics (issue 16): a quantile's exact margin in
rank and in value holds for the mechanism's own draws; a mean's RMSE is reported per cell."""

import numpy as np

from dprelease.plan.parse import parse_plan
from dprelease.release.statistics import preview_errors
from dprelease.stats.allocation import allocate
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.quantile import draw_quantiles
from dprelease.stats.source import read_stat_source
from helpers.cli import ROOT

SAMPLE = ROOT / "data" / "census_sample.csv"
PLAN = {
    "version": 1,
    "columns": {"sex": {"kind": "categorical", "domain": ["Female", "Male"]}},
    "tables": [
        {
            "name": "q",
            "by": ["sex"],
            "stat": {"quantile": 0.9, "column": "age", "bounds": [0, 100]},
        },
        {"name": "m", "by": ["sex"], "stat": {"mean": "income", "bounds": [0, 500000]}},
    ],
    "budget": {"accounting": "pure", "epsilon": 0.02},  # small: errors of a few years
}


def test_a_quantiles_value_margin_holds_for_its_own_draws() -> None:
    plan = parse_plan(PLAN)
    allocation = allocate(plan)
    source = read_stat_source(SAMPLE, plan)
    rng = np.random.default_rng(7)
    errors = preview_errors(plan, allocation, source, rng)
    quantile = allocation.statistics[0]
    data = source.stat_data(plan, quantile.statistic)
    truth = [np.quantile(g, 0.9, method="inverted_cdf") for g in data.groups()]
    draws = np.stack(
        [
            draw_quantiles(data, quantile.mechanism, PreviewNoise(rng))[:, 0]  # type: ignore[arg-type]
            for _ in range(600)
        ]
    )
    for cell, row in enumerate(errors["q"]):
        margin = row["±value q=0.9"]
        assert 0 < margin < 50 and row["±rank q=0.9"] > 0
        inside = np.mean(np.abs(draws[:, cell] - truth[cell]) <= margin)
        assert inside >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 600)  # the 95 % margin holds
        tighter = np.mean(np.abs(draws[:, cell] - truth[cell]) <= margin - 1)
        assert tighter < 0.95 + 3 * np.sqrt(0.05 * 0.95 / 600)  # and is the smallest one
    assert [set(r) for r in errors["m"]] == [{"RMSE", "bias"}] * 2
    assert all(r["RMSE"] > 0 for r in errors["m"])


def test_a_changed_resolution_changes_the_grid_and_rows_with_no_number_are_counted() -> None:
    """Issue 24.5: the preview draws from the stated grid (the plan's `resolution`); the data
    report counts the rows with no number (`N`, empty) and the values clamped, after the cap."""
    from helpers.income_data import ABOVE, INCOME_CSV, NO_NUMBER, income_plan

    rng = np.random.default_rng(3)
    drawn = {}
    for step in (200, 5000):  # 200: the default for bounds [0, 200000]
        plan = parse_plan(income_plan() if step == 200 else income_plan(resolution=step))
        budget = allocate(plan).statistics[0]
        source = read_stat_source(INCOME_CSV, plan, filename="acs.csv")
        report = source.report(plan)
        assert [(s.rows_left_out, s.rows_clamped) for s in report.statistics] == [
            (NO_NUMBER, ABOVE)
        ]
        data = source.stat_data(plan, budget.statistic)
        draws = np.stack(
            [
                draw_quantiles(data, budget.mechanism, PreviewNoise(rng))  # type: ignore[arg-type]
                for _ in range(40)
            ]
        )
        assert np.all(draws % step == 0) and np.all((draws >= 0) & (draws <= 200000))
        drawn[step] = draws
    assert np.any(drawn[200] % 5000 != 0)  # the finer grid is used, not only the coarse one
