"""Linear regression by noisy sufficient statistics (issue 28, part 4).

The release is the noisy moment vector of the rows (x₁…x_d, y) (`moments`: every pair of
(1, u_x, u_y) but y·y, clamped to the declared bounds, on a fixed-point grid, exact discrete
noise), i.e. noisy XᵀX and Xᵀy of the design with an intercept. Its sensitivity is derived in
`moments` (L1 = m·E·Q² under add/remove with E = (d+2)(d+3)/2 − 1 moments; twice that under
replace). The coefficients are post-processing of those noisy values:

    A = X̃ᵀX̃ (the (d+1) × (d+1) block), c = X̃ᵀỹ,   γ = (A + λI)⁻¹ c

on the [−1, 1] scale, then mapped back to the columns' own units (below). The noise can make
A indefinite or nearly singular (few rows, many columns, small ε); then the solve would amplify
the noise without bound. The fix is a ridge: λ = max(0, τ − λ_min(A)), which lifts the smallest
eigenvalue to τ = 2σ·√(d+1), the typical spectral norm of the symmetric noise matrix itself
(the edge of Wigner's semicircle, σ the noise std of one moment on the [−1, 1] scale). When the
data dominate the noise (λ_min(A) ≥ τ) there is no ridge and γ is the ordinary least squares of
the noisy moments. λ depends on released values only: no privacy cost.

Back to the columns' units: with u = (x − c)/h, u_y = γ₀ + Σ γ_j u_j gives
β_j = h_y·γ_j/h_j and intercept β₀ = c_y + h_y·(γ₀ − Σ γ_j·c_j/h_j).

Margins (`coefficient_moe`): a parametric bootstrap on the released moments (fresh noise of the
same law added, the coefficients recomputed, the half-width of the central interval at the
plan's confidence). It reads no data, so it is released with the coefficients. It measures the
noise's error only, not the sampling error of the regression itself (standard errors), and it
is centred on the noisy moments, so with few rows it is an estimate, not a bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.model_spec import RegressionSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.moments import (
    AddNoise,
    MomentMechanism,
    calibrate_moments,
    moment_matrix,
    noisy_moments,
    preview_adder,
    regression_pairs,
    resample_moments,
    true_moments,
)

BOOTSTRAP_DRAWS = 400


@dataclass(frozen=True)
class LinearMechanism:
    """A linear regression: its spec and the moment mechanism that carries its privacy."""

    spec: RegressionSpec
    moments: MomentMechanism

    @property
    def cost(self) -> Share:
        return self.moments.cost

    @property
    def noise(self) -> Noise:
        return self.moments.noise


def calibrate_linear(spec: RegressionSpec, share: Share, ctx: StatContext) -> LinearMechanism:
    pairs = regression_pairs(len(spec.columns))
    return LinearMechanism(spec, calibrate_moments(spec.bounds, pairs, share, ctx))


def ridge(matrix: np.ndarray, unit_std: float) -> float:
    """λ = max(0, 2σ√(d+1) − λ_min(A)) for the design block A (see the module docstring)."""
    floor = 2 * unit_std * math.sqrt(matrix.shape[0])
    return max(0.0, floor - float(np.linalg.eigvalsh(matrix)[0]))


def solve_scaled(moments: np.ndarray, mechanism: LinearMechanism) -> np.ndarray:
    """γ on the [−1, 1] scale from moments in grid units: (A + λI)⁻¹ c."""
    p = mechanism.moments.p
    matrix = moment_matrix(moments, mechanism.moments.pairs, p)
    a, c = matrix[:p, :p], matrix[:p, p]
    lam = ridge(a, mechanism.moments.unit_std)
    gamma: np.ndarray = np.linalg.solve(a + lam * np.eye(p), c)
    return gamma


def to_original(gamma: np.ndarray, mechanism: LinearMechanism) -> np.ndarray:
    """(intercept, β₁…β_d) in the columns' own units from γ on the [−1, 1] scale."""
    centre, half = mechanism.moments.scaling.centre, mechanism.moments.scaling.half
    cx, hx, cy, hy = centre[:-1], half[:-1], centre[-1], half[-1]
    slopes = hy * gamma[1:] / hx
    intercept = cy + hy * (gamma[0] - float(np.sum(gamma[1:] * cx / hx)))
    return np.concatenate([[intercept], slopes])


def coefficients(moments: np.ndarray, mechanism: LinearMechanism) -> np.ndarray:
    """Post-processing: the released coefficients (intercept first) from noisy moments."""
    return to_original(solve_scaled(moments, mechanism), mechanism)


def coefficient_moe(
    moments: np.ndarray,
    mechanism: LinearMechanism,
    confidence: float,
    rng: np.random.Generator,
    draws: int = BOOTSTRAP_DRAWS,
) -> np.ndarray:
    """Public: each coefficient's margin of error by the parametric bootstrap (module doc)."""
    released = coefficients(moments, mechanism)
    copies = resample_moments(moments, mechanism.moments.noise, draws, rng)
    spread = np.array([coefficients(copy, mechanism) - released for copy in copies])
    moe: np.ndarray = np.quantile(np.abs(spread), confidence, axis=0)
    return moe


def release_linear(
    values: np.ndarray, mechanism: LinearMechanism, add_noise: AddNoise
) -> np.ndarray:
    """Released noisy moments (secure when `add_noise` is); `coefficients` makes the table."""
    return noisy_moments(values, mechanism.moments, add_noise)


def exact_fit(values: np.ndarray, mechanism: LinearMechanism) -> np.ndarray:
    """CONFIDENTIAL (Preview only): the coefficients without noise, from the same clamped,
    gridded rows (what the release estimates)."""
    true = true_moments(values, mechanism.moments.scaling, mechanism.moments.pairs)
    p = mechanism.moments.p
    matrix = moment_matrix(true.astype(np.float64), mechanism.moments.pairs, p)
    gamma, *_ = np.linalg.lstsq(matrix[:p, :p], matrix[:p, p], rcond=None)
    return to_original(gamma, mechanism)


def simulate_linear_error(
    values: np.ndarray, mechanism: LinearMechanism, rng: np.random.Generator, draws: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """CONFIDENTIAL (Preview only): RMSE and bias of each coefficient against `exact_fit`."""
    moments = mechanism.moments
    true = true_moments(values, moments.scaling, moments.pairs).astype(np.float64)
    truth = exact_fit(values, mechanism)
    add = preview_adder(rng)
    errors = np.array(
        [
            coefficients(add(true, moments.noise, moments.sensitivity), mechanism) - truth
            for _ in range(draws)
        ]
    )
    return np.sqrt((errors**2).mean(axis=0)), errors.mean(axis=0)
