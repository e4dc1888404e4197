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
from collections.abc import Callable
from typing import Any

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.model_spec import ModelSpec, PcaSpec, RegressionSpec
from dprelease.plan.stat_spec import StatSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import StatisticKind
from dprelease.stats.logistic import (
    LogisticMechanism,
    Uniforms,
    calibrate_logistic,
    numpy_uniforms,
    release_logistic,
    secure_uniforms,
    simulate_logistic_error,
)
from dprelease.stats.noise import PreviewNoise, StatNoise
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
    "noisy_covariance": "noisy covariance: noisy moments of the clamped rows (a symmetric "
    "noise matrix), then its top eigenvectors",
}


_CALIBRATE_REGRESSION: dict[str, Callable[[RegressionSpec, Share, StatContext], ModelMechanism]] = {
    "linear": calibrate_linear,
    "logistic": calibrate_logistic,
}
"""Each regression family's calibration (`model_spec.FAMILIES`)."""


def calibrate_model(spec: ModelSpec, share: Share, ctx: StatContext) -> ModelMechanism:
    if isinstance(spec, PcaSpec):
        return calibrate_pca(spec, share, ctx)
    return _CALIBRATE_REGRESSION[spec.family](spec, share, ctx)


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


def draw_values(rows: np.ndarray, mech: ModelMechanism, noise: StatNoise) -> np.ndarray:
    """What the draw releases: the noisy moments (linear, PCA; their tables are post-
    processing) or the coefficients (logistic). Secure or PREVIEW by `noise`."""
    if isinstance(mech, LogisticMechanism):
        uniforms: Uniforms = (
            numpy_uniforms(noise.rng) if isinstance(noise, PreviewNoise) else secure_uniforms
        )
        return release_logistic(rows, mech, uniforms)
    if isinstance(mech, LinearMechanism):
        return release_linear(rows, mech, noise.counts)
    return release_pca(rows, mech, noise.counts)


def model_header(spec: ModelSpec) -> list[str]:
    if isinstance(spec, PcaSpec):
        return ["component", "column", "loading", "moe", "variance", "variance_moe"]
    return ["term", "coefficient", "moe"]


def model_table(
    mech: ModelMechanism,
    values: np.ndarray,
    confidence: float,
    rng: np.random.Generator | None = None,
) -> list[list[Any]]:
    """Rows of the released table from the drawn values (post-processing; the margins by the
    parametric bootstrap at `confidence`, from an OS-seeded generator unless `rng` is given)."""
    rng = rng if rng is not None else _bootstrap_rng()
    if isinstance(mech, LogisticMechanism):
        return [[term, float(v), None] for term, v in zip(mech.spec.terms, values, strict=True)]
    if isinstance(mech, LinearMechanism):
        coef = coefficients(values, mech)
        moe = coefficient_moe(values, mech, confidence, rng)
        return [
            [term, float(c), float(m)]
            for term, c, m in zip(mech.spec.terms, coef, moe, strict=True)
        ]
    found, margins = components(values, mech), components_moe(values, mech, confidence, rng)
    return [
        [
            c + 1,
            column,
            float(found.loadings[c, j]),
            float(margins.loadings[c, j]),
            float(found.variances[c]),
            float(margins.variances[c]),
        ]
        for c in range(mech.spec.k)
        for j, column in enumerate(mech.spec.columns)
    ]


def model_preview_error(
    rows: np.ndarray, mech: ModelMechanism, rng: np.random.Generator
) -> list[dict[str, float]]:
    """CONFIDENTIAL (Preview only): the table's error against the fit without noise on the
    same clamped rows, by simulation, as one cell's entry: per term its RMSE and bias (and a
    logistic coefficient's ±95% half-width), per component its RMS angle and variance RMSE."""
    if isinstance(mech, PcaMechanism):
        angles, variance = simulate_pca_error(rows, mech, rng, draws=100)
        out: dict[str, float] = {}
        for i, (a, v) in enumerate(zip(angles.tolist(), variance.tolist(), strict=True)):
            out[f"PC{i + 1} RMS angle (°)"] = a
            out[f"PC{i + 1} variance RMSE"] = v
        return [out]
    if isinstance(mech, LogisticMechanism):
        rmse, bias, moe = simulate_logistic_error(rows, mech, rng, draws=30)
    else:
        rmse, bias = simulate_linear_error(rows, mech, rng, draws=100)
        moe = None
    out = {}
    for i, term in enumerate(mech.spec.terms):
        out[f"{term} RMSE"], out[f"{term} bias"] = float(rmse[i]), float(bias[i])
        if moe is not None:
            out[f"{term} ±95%"] = float(moe[i])
    return [out]


def _rows(data: StatData) -> np.ndarray:
    if data.rows is None:
        raise InternalError("a regression or PCA needs its rows (StatSource.stat_data)")
    return data.rows


class ModelKind(StatisticKind[Any]):
    """A regression (linear or logistic) or a PCA: one table over all rows (no `by`)."""

    curve_unit = "noise of one moment, on the [−1, 1] scale"

    def __init__(self, kind: str, method: str, needs_delta: bool) -> None:
        self.kind, self.method, self.needs_delta = kind, method, needs_delta
        self.mechanism_text = MECHANISM_TEXT[method]

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> ModelMechanism:
        if not isinstance(spec, RegressionSpec | PcaSpec):
            raise InternalError("a model statistic needs a regression or PCA spec")
        return calibrate_model(spec, share, ctx)

    def mechanism_name(self, mech: ModelMechanism) -> str:
        return mechanism_name(mech)

    def error(self, mech: ModelMechanism, confidence: float) -> dict[str, Any]:
        return model_error(mech)

    def sensitivity(self, mech: ModelMechanism) -> dict[str, float | None]:
        return model_sensitivity(mech)

    def noise_fields(
        self, mech: ModelMechanism, cells: int, confidence: float
    ) -> tuple[float | None, float | None, float | None, float | None]:
        if isinstance(mech, LogisticMechanism):
            return None, None, None, None
        noise = mech.moments.noise
        return noise.scale, noise.std, None, None

    def draw(self, data: StatData, mech: ModelMechanism, noise: StatNoise) -> np.ndarray:
        """One cell: the drawn values (see `draw_values`) as a 1 × k array."""
        return draw_values(_rows(data), mech, noise).reshape(1, -1)

    def preview_error(
        self, data: StatData, mech: ModelMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        return model_preview_error(_rows(data), mech, rng)

    def summary(self, entry: dict[str, Any]) -> str:
        return self.short_margin(entry["error"])

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        if "epsilon_noise" in error:
            return (
                f"objective perturbation with ε′ = {error['epsilon_noise']:.4g} on the noise "
                f"term and regularisation Λ = {error['regularization']:.4g}; the coefficients' "
                "error depends on the data (the Preview simulates it for the data holder)"
            )
        return (
            f"noise std {error['moment_noise_std']:.4g} on each of {error['moments']} moments "
            f"(on the [−1, 1] scale); each released value's margin ({confidence}) is in its "
            "table, from a bootstrap on the released moments"
        )

    def short_margin(self, error: dict[str, Any]) -> str:
        if "epsilon_noise" in error:
            return f"ε′ {error['epsilon_noise']:.4g}, Λ {error['regularization']:.4g}"
        return f"moment σ {error['moment_noise_std']:.3g}"

    def curve_moe(self, error: dict[str, Any]) -> float:
        if "epsilon_noise" in error:
            return float(error["b_norm_mean"])
        return float(error["moment_noise_std"])

    def table(
        self, mech: ModelMechanism, values: np.ndarray, confidence: float
    ) -> tuple[list[str], list[list[Any]]]:
        """The released coefficient or component table (header, rows)."""
        return model_header(mech.spec), model_table(mech, values.ravel(), confidence)


LINEAR = ModelKind("regression", "linear", needs_delta=True)
LOGISTIC = ModelKind("regression", "logistic", needs_delta=False)
PCA = ModelKind("pca", "noisy_covariance", needs_delta=True)
