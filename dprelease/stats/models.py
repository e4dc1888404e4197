"""Regression and PCA as statistics of a plan: calibration, draw, released table, errors.

What the budget, the release and the dashboard ask of a `regression` or `pca` statistic, in one
place (the three mechanisms are `regression`, `logistic` and `pca`). A draw returns the public
values of its table as one flat array (`draw_model`); `model_table` lays them out:

| statistic | CSV columns | rows |
|---|---|---|
| linear regression | term, coefficient, moe | intercept, then each x |
| logistic regression | term, coefficient, moe | the same (log-odds; moe only in the Preview) |
| pca | component, column, loading, moe, variance, variance_moe | k × p |

The margins of linear regression and PCA come from a parametric bootstrap on the released
moments (public values only: no data, no privacy cost; its generator is seeded from the OS);
logistic regression has no published margin (it would need the data's Hessian): the Preview
shows the data holder its error by simulation instead.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from dprelease.plan.model_spec import ModelSpec, PcaSpec, RegressionSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.logistic import (
    LogisticMechanism,
    Uniforms,
    calibrate_logistic,
    numpy_uniforms,
    release_logistic,
    secure_uniforms,
    simulate_logistic_error,
)
from dprelease.stats.moments import AddNoise
from dprelease.stats.pca import (
    PcaMechanism,
    calibrate_pca,
    components,
    components_moe,
    release_pca,
    simulate_pca_error,
)
from dprelease.stats.regression import (
    LinearMechanism,
    calibrate_linear,
    coefficient_moe,
    coefficients,
    release_linear,
    simulate_linear_error,
)

ModelMechanism = LinearMechanism | LogisticMechanism | PcaMechanism
MECHANISM_TEXT = {
    "linear": "noisy sufficient statistics: the rows clamped to the bounds, noisy XᵀX and Xᵀy "
    "(exact discrete noise on fixed-point moments), solved with a ridge when the noise makes "
    "XᵀX indefinite",
    "logistic": "objective perturbation (Chaudhuri–Monteleoni–Sarwate): a random linear term "
    "added to the regularised logistic loss, pure ε",
    "pca": "noisy covariance: noisy moments of the clamped rows (a symmetric noise matrix), "
    "then its top eigenvectors",
}


def needs_delta(spec: ModelSpec) -> bool:
    """Linear regression and PCA take a δ under approx (a Gaussian); logistic is pure ε."""
    return not (isinstance(spec, RegressionSpec) and spec.family == "logistic")


def calibrate_model(spec: ModelSpec, share: Share, ctx: StatContext) -> ModelMechanism:
    if isinstance(spec, PcaSpec):
        return calibrate_pca(spec, share, ctx)
    if spec.family == "logistic":
        return calibrate_logistic(spec, share, ctx)
    return calibrate_linear(spec, share, ctx)


def mechanism_key(spec: ModelSpec) -> str:
    return "pca" if isinstance(spec, PcaSpec) else spec.family


def mechanism_name(mech: ModelMechanism) -> str:
    """`plan --json`'s `mechanism`: the noise on the moments, or objective perturbation."""
    if isinstance(mech, LogisticMechanism):
        return "objective_perturbation"
    return mech.moments.noise.mechanism


def model_sensitivity(mech: ModelMechanism) -> dict[str, float | None]:
    """L1 and L2 of the moment vector in grid units; objective perturbation's ‖Δb‖ ≤ k."""
    if isinstance(mech, LogisticMechanism):
        return {"l1": None, "l2": float(mech.distance)}
    sens = mech.moments.sensitivity
    return {"l1": float(sens.l1), "l2": sens.l2}


def model_error(mech: ModelMechanism) -> dict[str, Any]:
    """What is known without the data: the noise of one moment on the [−1, 1] scale, or the
    objective perturbation's ε′, Λ′ and E‖b‖ = (d+1)·k/ε′."""
    if isinstance(mech, LogisticMechanism):
        return {
            "epsilon_noise": mech.epsilon_noise,
            "regularization": mech.regularization,
            "b_norm_mean": mech.dimension / mech.rate,
        }
    return {"moment_noise_std": mech.moments.unit_std, "moments": len(mech.moments.pairs)}


def _bootstrap_rng() -> np.random.Generator:
    """For the public bootstrap of released values: seeded from the OS, never stored."""
    return np.random.default_rng(secrets.randbits(128))


def draw_model(
    rows: np.ndarray,
    mech: ModelMechanism,
    add_noise: AddNoise,
    confidence: float,
    preview_rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The released table's values, flat (see `model_table`). Secure when `preview_rng` is
    None (then `add_noise` must be the release's secure sampler); a PREVIEW otherwise."""
    rng = preview_rng if preview_rng is not None else _bootstrap_rng()
    if isinstance(mech, LogisticMechanism):
        uniforms: Uniforms = secure_uniforms if preview_rng is None else numpy_uniforms(rng)
        coef = release_logistic(rows, mech, uniforms)
        return np.concatenate([coef, np.full(coef.size, np.nan)])
    if isinstance(mech, LinearMechanism):
        moments = release_linear(rows, mech, add_noise)
        return np.concatenate(
            [coefficients(moments, mech), coefficient_moe(moments, mech, confidence, rng)]
        )
    moments = release_pca(rows, mech, add_noise)
    found, moe = components(moments, mech), components_moe(moments, mech, confidence, rng)
    return np.concatenate(
        [found.loadings.ravel(), found.variances, moe.loadings.ravel(), moe.variances]
    )


def model_header(spec: ModelSpec) -> list[str]:
    if isinstance(spec, PcaSpec):
        return ["component", "column", "loading", "moe", "variance", "variance_moe"]
    return ["term", "coefficient", "moe"]


def model_table(spec: ModelSpec, values: np.ndarray) -> list[list[Any]]:
    """Rows of the released table (numbers as floats; a missing margin as None)."""

    def number(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    if isinstance(spec, RegressionSpec):
        half = values.size // 2
        return [
            [term, number(values[i]), number(values[half + i])] for i, term in enumerate(spec.terms)
        ]
    k, p = spec.k, len(spec.columns)
    loadings = values[: k * p].reshape(k, p)
    variances = values[k * p : k * p + k]
    loading_moe = values[k * p + k : 2 * k * p + k].reshape(k, p)
    variance_moe = values[2 * k * p + k :]
    return [
        [
            c + 1,
            column,
            number(loadings[c, j]),
            number(loading_moe[c, j]),
            number(variances[c]),
            number(variance_moe[c]),
        ]
        for c in range(k)
        for j, column in enumerate(spec.columns)
    ]


def model_preview_error(
    rows: np.ndarray, mech: ModelMechanism, rng: np.random.Generator
) -> list[dict[str, float]]:
    """CONFIDENTIAL (Preview only): each coefficient's (or component's) error against the fit
    without noise on the same clamped rows, by simulation."""
    if isinstance(mech, PcaMechanism):
        angles, variance = simulate_pca_error(rows, mech, rng, draws=100)
        return [
            {"component": float(i + 1), "RMS angle (°)": a, "variance RMSE": v}
            for i, (a, v) in enumerate(zip(angles.tolist(), variance.tolist(), strict=True))
        ]
    if isinstance(mech, LogisticMechanism):
        rmse, bias, moe = simulate_logistic_error(rows, mech, rng, draws=30)
    else:
        rmse, bias = simulate_linear_error(rows, mech, rng, draws=100)
        moe = np.full(rmse.size, np.nan)
    return [
        {"RMSE": r, "bias": b, "±95%": m}
        for r, b, m in zip(rmse.tolist(), bias.tolist(), moe.tolist(), strict=True)
    ]
