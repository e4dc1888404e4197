"""Logistic regression's Λ chosen from ε (issue 38.2): the rule, the privacy inequality on the
exact output density, the error falling with ε, the intercept without shrinkage, the note."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dprelease.plan.model_spec import RegressionSpec, parse_model
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.logistic import (
    CURVATURE,
    UNREGULARISED,
    LogisticMechanism,
    calibrate_logistic,
    design,
    exact_fit,
    gradient_hessian,
    log_density,
    minimise,
    preview_logistic,
    regularization_note,
    regularization_pull,
    simulate_logistic_error,
    to_original,
    to_scaled,
)
from dprelease.stats.logistic_penalty import NOMINAL_COEFFICIENT, automatic_regularization

FEATURES = ["a", "b", "c"]
TRUTH = np.array([-2.4, 1.0, 0.25, -0.5])


def _spec(regularization: float | None = None) -> RegressionSpec:
    body: dict[str, object] = {"y": "y", "x": FEATURES, "family": "logistic"}
    if regularization is not None:
        body["regularization"] = regularization
    spec = parse_model({"regression": body, "bounds": {f: [-1, 1] for f in FEATURES}}, "t")
    assert isinstance(spec, RegressionSpec)
    return spec


def _rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, len(FEATURES)))
    y = rng.random(n) < 1 / (1 + np.exp(-(TRUTH[0] + x @ TRUTH[1:])))
    return np.column_stack([x, y.astype(float)])


def _unregularised(values: np.ndarray, spec: RegressionSpec) -> np.ndarray:
    v, s = design(values, spec)
    return to_original(minimise(v, s, UNREGULARISED, np.zeros(v.shape[1])), spec)


@pytest.mark.parametrize(("k", "m"), [(1, 1), (2, 1), (6, 3)])
def test_the_rule_minimises_the_balance_of_pull_and_noise(k: int, m: int) -> None:
    for epsilon in (0.05, 1.0, 4.0, 10.0, 100.0):
        lam = automatic_regularization(epsilon, k, m, CURVATURE)
        assert epsilon - m * math.log1p(CURVATURE / lam) > 0

        def balance(x: np.ndarray, eps: float = epsilon) -> np.ndarray:
            rest = eps - m * np.log1p(CURVATURE / x)
            return np.where(
                rest > 0, x * NOMINAL_COEFFICIENT + k / np.maximum(rest, 1e-300), np.inf
            )

        grid = lam * np.exp(np.linspace(-3, 3, 6001))
        assert balance(np.array([lam]))[0] <= balance(grid).min() * (1 + 1e-9)
    # smaller Λ as ε grows; a third of a small ε on the determinant when k = m
    lams = [automatic_regularization(e, 1, 1, CURVATURE) for e in (1, 4, 10, 100)]
    assert all(a > b for a, b in itertools.pairwise(lams))
    small = automatic_regularization(0.01, 1, 1, CURVATURE)
    assert math.log1p(CURVATURE / small) == pytest.approx(0.01 / 3, rel=0.01)


@pytest.mark.parametrize(
    "ctx",
    [StatContext(), StatContext(neighbors="replace"), StatContext(max_rows=3, neighbors="replace")],
)
def test_calibration_never_spends_more_than_its_epsilon(ctx: StatContext) -> None:
    for regularization in (None, 0.01, 2.0):
        for epsilon in (0.01, 0.5, 1.0, 4.0, 10.0, 100.0, 1000.0):
            mech = calibrate_logistic(_spec(regularization), Share("pure", epsilon=epsilon), ctx)
            spent = mech.epsilon_noise + ctx.max_rows * math.log1p(CURVATURE / mech.regularization)
            assert spent <= epsilon and mech.epsilon_noise > 0
            assert mech.automatic == (regularization is None)
            if regularization == 2.0 and epsilon >= 1:
                assert mech.regularization == 2.0


def _loss(mech: LogisticMechanism, w: np.ndarray, d: np.ndarray, d_prime: np.ndarray) -> float:
    v, s = design(d, mech.spec)
    v2, s2 = design(d_prime, mech.spec)
    return log_density(w, v, s, mech) - log_density(w, v2, s2, mech)


def _log_det(w: np.ndarray, values: np.ndarray, mech: LogisticMechanism) -> float:
    v, s = design(values, mech.spec)
    return float(np.linalg.slogdet(gradient_hessian(w, v, s, mech.regularization)[1])[1])


def test_the_exact_density_ratio_stays_within_epsilon_under_replace() -> None:
    """ln p_D(w)/p_D′(w) on replace neighbours (one row swapped), at outputs w where the
    swapped-in corner row has the largest curvature (z = 0) and elsewhere: never above ε. The
    determinant's part alone reaches ln(1 + c/Λ) (m = 1, no common rows): m·ln(1 + c/Λ) is
    the charge it needs, and the 2m of CMS's bound is loose."""
    spec = _spec()
    ctx = StatContext(neighbors="replace")
    rng = np.random.default_rng(5)
    for epsilon in (0.5, 1.0, 4.0):
        mech = calibrate_logistic(spec, Share("pure", epsilon=epsilon), ctx)
        worst, det_part = -math.inf, -math.inf
        for trial in range(300):
            common = np.column_stack(
                [rng.uniform(-1, 1, (2, 3)), rng.integers(0, 2, 2).astype(float)]
            )[: 0 if trial % 2 else 2]
            corner = np.append(rng.choice([-1.0, 1.0], 3), 1.0)
            other = np.append(rng.choice([-1.0, 1.0], 3), 0.0)
            d, d_prime = np.vstack([common, corner]), np.vstack([common, other])
            v = design(corner[None, :], spec)[0][0]
            w = rng.normal(0, 3, 4) * rng.choice([0.3, 3.0])
            w -= (w @ v) * v  # z = 0 for the corner row (‖v‖ = 1): ℓ″ = c, the worst curvature
            w += rng.normal(0, 0.2, 4) * rng.integers(0, 2)
            for a, b in ((d, d_prime), (d_prime, d)):
                worst = max(worst, _loss(mech, w, a, b))
            det_part = max(det_part, _log_det(w, d, mech) - _log_det(w, d_prime, mech))
        assert worst <= epsilon + 1e-9
        assert det_part <= math.log1p(CURVATURE / mech.regularization) + 1e-9
        assert det_part > 0.9 * math.log1p(CURVATURE / mech.regularization)


def _errors(epsilon: float, seeds: int) -> float:
    spec = _spec()
    errors = []
    for seed in range(seeds):
        values = _rows(100_000, seed)
        mech = calibrate_logistic(spec, Share("pure", epsilon=epsilon), StatContext())
        released = preview_logistic(values, mech, np.random.default_rng(100 + seed))
        errors.append(float(np.linalg.norm(released - _unregularised(values, spec))))
    return float(np.median(errors))


def test_the_error_keeps_falling_beyond_epsilon_4() -> None:
    e1, e4, e100 = _errors(1.0, 5), _errors(4.0, 5), _errors(100.0, 5)
    assert e4 < e1 / 2
    assert e100 < e4 / 5  # Λ = 1 held it at the shrinkage's floor (about e4 / 1.5)


def test_without_noise_the_intercept_is_the_unregularised_fit_at_large_epsilon() -> None:
    values = _rows(100_000, 0)
    spec = _spec()
    reference = _unregularised(values, spec)
    # the reference is the maximum-likelihood fit: the unpenalised score vanishes there
    v, s = design(values, spec)
    grad, _ = gradient_hessian(to_scaled(reference, spec), v, s, 0.0)
    assert float(np.abs(grad).max()) < 1e-6
    large = calibrate_logistic(spec, Share("pure", epsilon=100.0), StatContext())
    assert abs(exact_fit(values, large)[0] - reference[0]) < 1e-5
    fixed = calibrate_logistic(_spec(1.5), Share("pure", epsilon=100.0), StatContext())
    assert exact_fit(values, fixed)[0] - reference[0] > 1e-3  # Λ = 1.5 shrinks it toward 0


def test_the_note_states_lambda_and_its_pull_from_released_values_only() -> None:
    spec = _spec()
    w = np.array([-4.8, 2.0, 0.5, -1.0])
    assert np.allclose(to_scaled(to_original(w, spec), spec), w)
    offset = parse_model(
        {
            "regression": {"y": "y", "x": ["a"], "family": "logistic"},
            "bounds": {"a": [16, 95]},
        },
        "t",
    )
    assert isinstance(offset, RegressionSpec)
    assert np.allclose(to_scaled(to_original(w[:2], offset), offset), w[:2])
    mech = calibrate_logistic(spec, Share("pure", epsilon=4.0), StatContext())
    coefficients = to_original(w, spec)
    pull = regularization_pull(coefficients, mech)
    expected = mech.regularization * np.linalg.norm(w) / (4 / (mech.epsilon_noise / 1))
    assert pull == pytest.approx(expected)
    note = regularization_note(mech, coefficients)
    assert note is not None and "chosen from ε" in note and f"{mech.regularization:.3g}" in note
    assert regularization_note(object(), coefficients) is None


def test_the_preview_bias_shows_the_shrinkage() -> None:
    values = _rows(20_000, 3)
    rng = np.random.default_rng(8)
    strong = calibrate_logistic(_spec(30.0), Share("pure", epsilon=10.0), StatContext())
    _, bias, _ = simulate_logistic_error(values, strong, rng, draws=20)
    assert bias[0] > 0.01  # a negative intercept pulled toward 0, against the unregularised fit
    chosen = calibrate_logistic(_spec(), Share("pure", epsilon=10.0), StatContext())
    _, small, _ = simulate_logistic_error(values, chosen, rng, draws=20)
    assert abs(small[0]) < bias[0] / 3
