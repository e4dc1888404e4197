"""Regression and PCA (issue 28.4): specs, sensitivity oracles, calibration, accuracy, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import BudgetError, PlanError
from dprelease.plan.model_spec import PcaSpec, RegressionSpec, model_to_dict, parse_model
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.noise import secure_noisy_counts
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.logistic import (
    CURVATURE,
    calibrate_logistic,
    exact_fit,
    preview_logistic,
    release_logistic,
)
from dprelease.stats.logistic_penalty import automatic_regularization
from dprelease.stats.moments import GRID, all_pairs, regression_pairs, true_moments
from dprelease.stats.pca import (
    calibrate_pca,
    components,
    components_moe,
    exact_components,
    release_pca,
)
from dprelease.stats.regression import (
    calibrate_linear,
    coefficient_moe,
    coefficients,
    release_linear,
    ridge,
)

LINEAR = {
    "regression": {"y": "y", "x": ["a", "b"], "family": "linear"},
    "bounds": {"a": [0, 10], "b": [-5, 5], "y": [0, 100]},
}
PCA = {"pca": ["a", "b", "c"], "k": 2, "bounds": {"a": [0, 10], "b": [-5, 5], "c": [0, 1]}}


# --- specs and one-line errors ---------------------------------------------------------------


def secure(true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
    """The release's secure sampler, as the release layer hands it to a statistic."""
    return secure_noisy_counts(true, noise, sens.l1, sens.l2_squared)


def test_specs_round_trip() -> None:
    for raw in (LINEAR, PCA):
        spec = parse_model(raw, "t")
        assert parse_model(model_to_dict(spec), "t") == spec
    logistic = parse_model(
        {"regression": {"y": "y", "x": ["a"], "family": "logistic"}, "bounds": {"a": [0, 1]}}, "t"
    )
    assert isinstance(logistic, RegressionSpec) and logistic.bounds[-1] == (0.0, 1.0)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({**LINEAR, "bounds": {"a": [10, 0], "b": [-5, 5], "y": [0, 1]}}, "lo < hi"),
        ({**LINEAR, "bounds": {"a": [0, 1], "b": [0, 1], "y": [0, 1], "z": [0, 1]}}, "'z'"),
        ({**LINEAR, "bounds": {"a": [0, 1], "y": [0, 1]}}, "needs [lo, hi] for column 'b'"),
        ({**PCA, "k": 4}, "k must be at most the number of columns (3)"),
        ({**PCA, "k": 0}, "k must be a whole number"),
        ({"regression": {"y": "y", "x": ["a"], "family": "poisson"}, "bounds": {}}, "family"),
        ({"regression": {"y": "a", "x": ["a"]}, "bounds": {"a": [0, 1]}}, "both y and x"),
        ({"pca": ["a"], "bounds": {"a": [0, 1]}}, "at least 2 columns"),
        ({**LINEAR, "extra": 1}, "unknown keys"),
    ],
)
def test_bad_specs_give_one_line_errors(raw: dict, message: str) -> None:
    with pytest.raises(PlanError) as error:
        parse_model(raw, "t")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_epsilon_out_of_range_is_refused(epsilon: float) -> None:
    with pytest.raises(BudgetError):
        calibrate_linear(parse_model(LINEAR, "t"), Share("pure", epsilon=epsilon), StatContext())


# --- sensitivity: brute-force oracle over the corners of the box ----------------------------


@pytest.mark.parametrize("neighbors", ["add_remove", "replace"])
@pytest.mark.parametrize("max_rows", [1, 2])
def test_moment_sensitivity_is_the_largest_change_of_a_unit(neighbors: str, max_rows: int) -> None:
    spec = parse_model(LINEAR, "t")
    ctx = StatContext(max_rows=max_rows, neighbors=neighbors)  # type: ignore[arg-type]
    mech = calibrate_linear(spec, Share("pure", epsilon=1.0), ctx).moments
    corners = np.array(list(itertools.product(*spec.bounds)))  # 8 rows, every |z| = Q
    base = np.array([[5.0, 0.0, 50.0]])
    worst_l1, worst_l2 = 0, 0
    for first, second in itertools.product(range(len(corners)), repeat=2):
        unit = corners[[first] * max_rows]
        other = corners[[second] * max_rows]
        x = true_moments(base, mech.scaling, mech.pairs)
        if neighbors == "add_remove":
            y = true_moments(np.vstack([base, unit]), mech.scaling, mech.pairs)
        else:
            x = true_moments(np.vstack([base, other]), mech.scaling, mech.pairs)
            y = true_moments(np.vstack([base, unit]), mech.scaling, mech.pairs)
        worst_l1 = max(worst_l1, int(np.abs(y - x).sum()))
        worst_l2 = max(worst_l2, int(((y - x) ** 2).sum()))
    assert worst_l1 <= mech.sensitivity.l1 and worst_l2 <= mech.sensitivity.l2_squared
    if neighbors == "add_remove":  # attained exactly
        assert worst_l1 == mech.sensitivity.l1 and worst_l2 == mech.sensitivity.l2_squared
        assert mech.sensitivity.l1 == max_rows * len(mech.pairs) * GRID**2


def test_pairs_and_noise_per_accountant() -> None:
    assert len(all_pairs(3)) == 10 and len(regression_pairs(3)) == 9
    spec = parse_model(LINEAR, "t")
    ctx = StatContext()
    pure = calibrate_linear(spec, Share("pure", epsilon=1.0), ctx)
    assert pure.noise.mechanism == "discrete_laplace"
    assert pure.noise.scale >= pure.moments.sensitivity.l1 / 1.0
    zcdp = calibrate_linear(spec, Share("zcdp", rho=0.5), ctx)
    sens = zcdp.moments.sensitivity
    assert zcdp.noise.mechanism == "discrete_gaussian"
    assert sens.l2_squared / (2 * zcdp.noise.scale**2) <= 0.5
    approx = calibrate_linear(spec, Share("approx", epsilon=1.0, delta=1e-6), ctx)
    assert approx.noise.mechanism == "gaussian"


# --- linear regression ------------------------------------------------------------------------


def _linear_data(n: int, rng: np.random.Generator) -> np.ndarray:
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    y = np.clip(20 + 3 * a - 2 * b + rng.normal(0, 3, n), 0, 100)
    return np.column_stack([a, b, y])


def test_linear_regression_recovers_the_coefficients_within_its_margin() -> None:
    rng = np.random.default_rng(7)
    values = _linear_data(200_000, rng)
    mech = calibrate_linear(parse_model(LINEAR, "t"), Share("pure", epsilon=1.0), StatContext())
    moments = release_linear(values, mech, secure)
    released = coefficients(moments, mech)
    moe = coefficient_moe(moments, mech, 0.95, rng)
    assert np.allclose(released, [20, 3, -2], atol=0.2)
    assert np.all(moe > 0) and np.all(moe < 0.5)


def test_rows_with_a_missing_value_are_left_out() -> None:
    rng = np.random.default_rng(8)
    values = _linear_data(1000, rng)
    holed = np.vstack([values, [[np.nan, 1.0, 2.0], [1.0, 2.0, np.nan]]])
    mech = calibrate_linear(parse_model(LINEAR, "t"), Share("pure", epsilon=1.0), StatContext())
    assert np.array_equal(
        true_moments(holed, mech.moments.scaling, mech.moments.pairs),
        true_moments(values, mech.moments.scaling, mech.moments.pairs),
    )


def test_ridge_lifts_an_indefinite_noisy_design() -> None:
    matrix = np.array([[1.0, 0.0], [0.0, -3.0]])
    lam = ridge(matrix, unit_std=1.0)
    assert np.linalg.eigvalsh(matrix + lam * np.eye(2))[0] == pytest.approx(2 * math.sqrt(2))
    assert ridge(np.eye(2) * 100, unit_std=1.0) == 0.0


def test_few_rows_and_small_epsilon_still_give_finite_coefficients() -> None:
    rng = np.random.default_rng(9)
    mech = calibrate_linear(parse_model(LINEAR, "t"), Share("pure", epsilon=0.01), StatContext())
    released = coefficients(release_linear(_linear_data(5, rng), mech, secure), mech)
    assert np.all(np.isfinite(released))


# --- logistic regression ----------------------------------------------------------------------

LOGISTIC = {
    "regression": {"y": "y", "x": ["a"], "family": "logistic"},
    "bounds": {"a": [0, 10]},
}


def test_logistic_epsilon_adjustment() -> None:
    spec = parse_model(LOGISTIC, "t")
    assert isinstance(spec, RegressionSpec)
    chosen = calibrate_logistic(spec, Share("pure", epsilon=1.0), StatContext())
    assert chosen.automatic and chosen.regularization == automatic_regularization(1, 1, 1, 0.25)
    assert chosen.epsilon_noise + math.log1p(CURVATURE / chosen.regularization) <= 1.0
    own = parse_model(
        {**LOGISTIC, "regression": {**LOGISTIC["regression"], "regularization": 2}}, "t"
    )
    assert isinstance(own, RegressionSpec)
    mech = calibrate_logistic(own, Share("pure", epsilon=1.0), StatContext())
    assert mech.regularization == 2.0 and not mech.automatic
    assert mech.epsilon_noise + math.log1p(CURVATURE / 2.0) <= 1.0
    # ε too small for the plan's Λ = 2: Λ is raised so the determinant part costs ε/2 (m = 1)
    small = calibrate_logistic(own, Share("pure", epsilon=0.1), StatContext(neighbors="replace"))
    assert small.regularization > 2.0 and small.epsilon_noise < 0.05
    assert math.log1p(CURVATURE / small.regularization) <= 0.05
    # zcdp: ρ buys ε = √(2ρ)
    z = calibrate_logistic(spec, Share("zcdp", rho=0.5), StatContext())
    assert z.epsilon == pytest.approx(1.0)


def test_logistic_regression_recovers_the_fit() -> None:
    rng = np.random.default_rng(11)
    n = 100_000
    a = rng.uniform(0, 10, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(-2 + 0.5 * a)))).astype(float)
    mech = calibrate_logistic(parse_model(LOGISTIC, "t"), Share("pure", epsilon=1.0), StatContext())  # type: ignore[arg-type]
    values = np.column_stack([a, y])
    released = release_logistic(values, mech)
    assert np.allclose(released, [-2, 0.5], atol=0.1)
    assert np.allclose(released, exact_fit(values, mech), atol=0.05)
    preview = preview_logistic(values, mech, rng)
    assert np.allclose(preview, released, atol=0.1)


# --- PCA --------------------------------------------------------------------------------------


def test_pca_finds_the_main_direction_within_its_margin() -> None:
    rng = np.random.default_rng(12)
    n = 100_000
    a = rng.uniform(0, 10, n)
    b = np.clip(0.8 * (a - 5) + rng.normal(0, 0.5, n), -5, 5)
    c = rng.uniform(0, 1, n)
    spec = parse_model(PCA, "t")
    assert isinstance(spec, PcaSpec)
    mech = calibrate_pca(spec, Share("pure", epsilon=1.0), StatContext())
    values = np.column_stack([a, b, c])
    moments = release_pca(values, mech, secure)
    released = components(moments, mech)
    exact = exact_components(values, mech)
    assert released.loadings.shape == (2, 3)
    assert abs(float(released.loadings[0] @ exact.loadings[0])) > 0.999
    assert released.loadings[0, np.argmax(np.abs(released.loadings[0]))] > 0  # sign convention
    moe = components_moe(moments, mech, 0.95, rng, draws=100)
    assert np.all(np.abs(released.loadings - exact.loadings) <= 5 * moe.loadings + 1e-3)
    assert np.all(released.variances >= 0)


# --- as a statistic: draw, table, dashboard edit ----------------------------------------------


def test_each_model_is_released_as_its_own_table() -> None:
    from dprelease.stats.data import StatData
    from dprelease.stats.noise import PreviewNoise
    from dprelease.stats.registry import kind_of

    rng = np.random.default_rng(13)
    values = _linear_data(20_000, rng)
    data = StatData(np.zeros(len(values), dtype=np.int64), values[:, -1], 1, rows=values)
    for raw in (LINEAR, PCA):
        spec = parse_model(raw, "t")
        kind = kind_of(spec)
        mech = kind.calibrate(spec, Share("pure", epsilon=1.0), StatContext())
        drawn = kind.draw(data, mech, PreviewNoise(rng))
        assert drawn.shape == (1, len(mech.moments.pairs))  # the noisy moments are released
        header, rows = kind.table(mech, drawn, 0.95)
        assert all(len(row) == len(header) for row in rows)
        if isinstance(spec, RegressionSpec):
            assert [row[0] for row in rows] == ["intercept", "a", "b"]
            assert all(row[2] > 0 for row in rows)
        else:
            assert [row[:2] for row in rows][:3] == [[1, "a"], [1, "b"], [1, "c"]]
            assert len(rows) == 6
    logistic = parse_model(LOGISTIC, "t")
    kind = kind_of(logistic)
    assert not kind.needs_delta and kind_of(parse_model(LINEAR, "t")).needs_delta
    mech = kind.calibrate(logistic, Share("pure", epsilon=1.0), StatContext())
    binary = np.column_stack([values[:, 0], values[:, 2] > 50]).astype(float)
    data = StatData(np.zeros(len(binary), dtype=np.int64), binary[:, -1], 1, rows=binary)
    header, rows = kind.table(mech, kind.draw(data, mech, PreviewNoise(rng)), 0.95)
    assert [row[0] for row in rows] == ["intercept", "a"] and rows[0][2] is None


def test_dashboard_adds_a_model_and_refuses_bad_input_in_one_line() -> None:
    from dprelease.plan.model_edit import add_model, model_stat, parse_bounds

    assert parse_bounds("age: 16, 95\nhours 0 99") == {"age": [16, 95], "hours": [0, 99]}
    stat = model_stat("linear regression", "y", "a, b", "", 1, "a: 0, 10\nb: -5, 5\ny: 0, 100")
    plan = add_model({"tables": []}, stat)
    assert plan["tables"][0] == {"name": "regression_y", "by": [], "stat": LINEAR}
    again = add_model(plan, stat)
    assert again["tables"][1]["name"] == "regression_y_2"
    for bad in ("a 0", "a: x, y"):
        with pytest.raises(PlanError) as error:
            parse_bounds(bad)
        assert "\n" not in str(error.value)
    with pytest.raises(PlanError, match="at most the number of columns"):
        add_model({}, model_stat("pca", "", "", "a, b", 3, "a: 0, 1\nb: 0, 1"))


def test_the_data_holder_sees_the_rows_a_model_leaves_out_or_clamps() -> None:
    import pyarrow as pa

    from dprelease.plan.parse import parse_plan
    from dprelease.stats.source import StatSource

    plan = parse_plan(
        {
            "version": 1,
            "columns": {},
            "tables": [{"name": "m", "stat": LINEAR}],
            "budget": {"accounting": "pure", "epsilon": 1},
        }
    )
    table = pa.table(
        {
            "a": [1.0, None, 5.0, 20.0],  # a missing value; a value above its bounds
            "b": [0.0, 1.0, None, 0.0],
            "y": [10.0, 20.0, 30.0, 40.0],
        }
    )
    source = StatSource(table, None)
    report = source.report(plan).statistics[0]
    assert (report.column, report.rows_left_out, report.rows_clamped) == ("a, b, y", 2, 1)
    data = source.stat_data(plan, plan.statistics[0])
    assert data.rows is not None and data.rows.shape == (4, 3)
    from dprelease.data.coverage import plan_coverage

    coverage = plan_coverage(table, plan)
    assert coverage.rows_left_out == 2 and coverage.statistics == (report,)
