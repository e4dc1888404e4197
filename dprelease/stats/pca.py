"""PCA from a noisy covariance (issue 28, part 4; "Analyze Gauss", Dwork, Talwar, Thakurta &
Zhang 2014, with the house's exact discrete noise).

The release is the noisy moment vector of the p columns (`moments`: every pair of (1, u),
u the columns mapped onto [−1, 1] after clamping, on a fixed-point grid): noisy n, Σu and
Σuuᵀ, with the symmetric noise matrix that mirroring the upper triangle gives. Sensitivity
(derived in `moments`): L1 = m·E·Q², L2² = m²·E·Q⁴ under add/remove with E = (p+1)(p+2)/2,
twice and four times that under replace.

Post-processing (free): ñ = M̃₀₀, μ̃ = M̃₀·/ñ, Cov_u = M̃··/ñ − μ̃μ̃ᵀ, then the covariance in
the columns' own units Cov_x = H·Cov_u·H (H = diag of the half-ranges), as a non-private PCA
of the raw columns would use. Its eigenvectors with the k largest eigenvalues are the released
components; each is signed so that its largest loading (in absolute value) is positive, and
the released variances are the eigenvalues, clipped at 0 (noise can make small ones negative).
Why not the exponential mechanism over subspaces (Chaudhuri, Sarwate & Sinha 2012, the seed's
"PCA via the exponential mechanism")? It needs an MCMC sampler of the Bingham distribution,
which has no exact, auditable implementation; the noisy covariance is exact, composes like
every other release here, and is as accurate for the few columns a census table has.

Margins: a parametric bootstrap on the released moments (fresh noise of the same law, the
components recomputed and sign-aligned to the released ones): the half-width of the central
interval of each loading and variance. It reads no data, so it is released with them. When the
gap between two eigenvalues is within the noise, their components can swap or rotate; the
margins then grow large, which is the honest signal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprelease.plan.model_spec import PcaSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.moments import (
    AddNoise,
    MomentMechanism,
    all_pairs,
    calibrate_moments,
    moment_matrix,
    noisy_moments,
    preview_adder,
    resample_moments,
    true_moments,
)

BOOTSTRAP_DRAWS = 400


@dataclass(frozen=True)
class PcaMechanism:
    spec: PcaSpec
    moments: MomentMechanism

    @property
    def cost(self) -> Share:
        return self.moments.cost


@dataclass(frozen=True)
class Components:
    """k components: loadings (k × p, one row per component) and their variances (k)."""

    loadings: np.ndarray
    variances: np.ndarray


def calibrate_pca(spec: PcaSpec, share: Share, ctx: StatContext) -> PcaMechanism:
    pairs = all_pairs(len(spec.columns))
    return PcaMechanism(spec, calibrate_moments(spec.bounds, pairs, share, ctx))


def covariance(moments: np.ndarray, mechanism: PcaMechanism) -> np.ndarray:
    """Cov_x in the columns' own units from moments in grid units (post-processing)."""
    p = mechanism.moments.p
    matrix = moment_matrix(moments, mechanism.moments.pairs, p)
    n = max(matrix[0, 0], 1.0)  # a noisy count below 1 would blow up the ratio
    mean = matrix[0, 1:] / n
    cov_u = matrix[1:, 1:] / n - np.outer(mean, mean)
    half = mechanism.moments.scaling.half
    cov: np.ndarray = cov_u * np.outer(half, half)
    return cov


def components(moments: np.ndarray, mechanism: PcaMechanism) -> Components:
    """The top k eigenvectors of the (symmetric) noisy covariance, signed, with variances."""
    values, vectors = np.linalg.eigh(covariance(moments, mechanism))
    order = np.argsort(values)[::-1][: mechanism.spec.k]
    loadings = vectors[:, order].T
    signs = np.sign(loadings[np.arange(len(order)), np.argmax(np.abs(loadings), axis=1)])
    loadings = loadings * np.where(signs == 0, 1.0, signs)[:, None]
    return Components(loadings, np.maximum(values[order], 0.0))


def _aligned(copy: Components, released: Components) -> np.ndarray:
    """A bootstrap copy's loadings, each signed to agree with the released component."""
    dots = np.sum(copy.loadings * released.loadings, axis=1)
    result: np.ndarray = copy.loadings * np.where(dots < 0, -1.0, 1.0)[:, None]
    return result


def components_moe(
    moments: np.ndarray,
    mechanism: PcaMechanism,
    confidence: float,
    rng: np.random.Generator,
    draws: int = BOOTSTRAP_DRAWS,
) -> Components:
    """Public: margins of error of each loading and variance (parametric bootstrap)."""
    released = components(moments, mechanism)
    loading_errors, variance_errors = [], []
    for copy_moments in resample_moments(moments, mechanism.moments.noise, draws, rng):
        copy = components(copy_moments, mechanism)
        loading_errors.append(np.abs(_aligned(copy, released) - released.loadings))
        variance_errors.append(np.abs(copy.variances - released.variances))
    return Components(
        np.quantile(np.array(loading_errors), confidence, axis=0),
        np.quantile(np.array(variance_errors), confidence, axis=0),
    )


def release_pca(values: np.ndarray, mechanism: PcaMechanism, add_noise: AddNoise) -> np.ndarray:
    """Released noisy moments (secure when `add_noise` is); `components` makes the table."""
    return noisy_moments(values, mechanism.moments, add_noise)


def exact_components(values: np.ndarray, mechanism: PcaMechanism) -> Components:
    """CONFIDENTIAL (Preview only): the components without noise (clamped, gridded rows)."""
    true = true_moments(values, mechanism.moments.scaling, mechanism.moments.pairs)
    return components(true.astype(np.float64), mechanism)


def simulate_pca_error(
    values: np.ndarray, mechanism: PcaMechanism, rng: np.random.Generator, draws: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """CONFIDENTIAL (Preview only): per component, the RMS angle (degrees) between the noisy and
    the exact component, and the RMSE of its variance."""
    moments = mechanism.moments
    true = true_moments(values, moments.scaling, moments.pairs).astype(np.float64)
    exact = components(true, mechanism)
    angles, errors = [], []
    add = preview_adder(rng)
    for _ in range(draws):
        noisy = components(add(true, moments.noise, moments.sensitivity), mechanism)
        cosine = np.clip(np.abs(np.sum(noisy.loadings * exact.loadings, axis=1)), 0.0, 1.0)
        angles.append(np.degrees(np.arccos(cosine)))
        errors.append(noisy.variances - exact.variances)
    return np.sqrt(np.mean(np.square(angles), axis=0)), np.sqrt(np.mean(np.square(errors), axis=0))
