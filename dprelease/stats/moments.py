"""Noisy second moments of bounded rows: the sufficient statistics of linear regression and PCA.

Each row's p values (columns with public bounds [lo_j, hi_j]) are clamped into the bounds,
mapped affinely onto [−1, 1] (u_j = (x_j − c_j)/h_j, c the midpoint, h the half-width) and
put on a fixed-point grid of step 1/Q: z_j = rint(Q·u_j), an integer in [−Q, Q]. With z_0 = Q
(the constant 1, for the intercept and the row count), the mechanism releases the integer
moments

    M_ab = Σ_rows z_a·z_b      for the listed pairs a ≤ b of {0, 1, …, p}

(E pairs; the upper triangle of ZᵀZ, so the released matrix is symmetric: its noise is mirrored
from the triangle, the "Analyze Gauss" shape). Everything else (means, covariance, regression
coefficients, principal components) is computed from the noisy M̃ and costs nothing more.

Sensitivity, in grid units, of the vector of E moments. One row changes M_ab by z_a·z_b, and
|z_a·z_b| ≤ Q² (every |z| ≤ Q), so a privacy unit of at most m rows changes each moment by at
most m·Q² when it is added or removed, and by at most 2m·Q² when it is replaced (its rows
leave, others come):

| neighbours | L1 | L2² |
|---|---|---|
| add/remove | m·E·Q² | m²·E·Q⁴ |
| replace | 2m·E·Q² | 4m²·E·Q⁴ |

Both are attained (one row at a corner of the box, every |z_j| = Q), so they are exact, not
only upper bounds; the audit builds that row. Noise per accountant as for sums (`sums.noise_for`):
discrete Laplace b = L1/ε (pure, advanced), Gaussian (approx), discrete Gaussian σ² = L2²/2ρ
(zcdp), drawn by the release's secure samplers (`release.noise.secure_noisy_counts`: exact,
OS CSPRNG) on integers, so a moment is exact integer arithmetic until the noise is added.

Rounding to the grid moves each u by at most 1/(2Q) (Q = 1024: 1/2048 of the half-range), far
below the noise for any n a census table has; it is deterministic, so it costs no privacy.
Int64 and float exactness: |M_ab| ≤ n·Q² = n·2²⁰ < 2⁵³ for n below 8·10⁹ rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import DataError, InternalError
from dprelease.plan.table_spec import Sensitivity
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.sums import noise_for

GRID = 1024  # Q: grid points per half-range of every column
EXACT_ROWS = 2**53 // GRID**2  # moments stay exact integers in float64 below this many rows

Pairs = tuple[tuple[int, int], ...]
AddNoise = Callable[[np.ndarray, Noise, Sensitivity], np.ndarray]
"""Whole numbers plus fresh noise of the accountant's mechanism, handed in by the caller: the
release's secure sampler (`release.noise.secure_noisy_counts`) or, for a PREVIEW, numpy's."""


def all_pairs(p: int) -> Pairs:
    """Every pair a ≤ b of {0, …, p} (0 the constant): E = (p+1)(p+2)/2 moments."""
    return tuple((a, b) for a in range(p + 1) for b in range(a, p + 1))


def regression_pairs(p: int) -> Pairs:
    """The pairs a linear regression of column p on columns 1..p−1 needs: all but y·y."""
    return tuple(pair for pair in all_pairs(p) if pair != (p, p))


def moment_sensitivity(pairs: Pairs, ctx: StatContext) -> Sensitivity:
    """L1 and L2² of the moment vector in grid units (table in the module docstring)."""
    step = ctx.symmetric_distance * GRID * GRID  # m·Q² (add/remove) or 2m·Q² (replace)
    return Sensitivity(l1=len(pairs) * step, l2_squared=len(pairs) * step * step)


@dataclass(frozen=True)
class Scaling:
    """The public affine map of each column onto [−1, 1]: u = (x − centre)/half."""

    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, bounds: tuple[tuple[float, float], ...]) -> Scaling:
        lo = np.array([b[0] for b in bounds], dtype=np.float64)
        hi = np.array([b[1] for b in bounds], dtype=np.float64)
        if not np.all(lo < hi):
            raise InternalError("bounds must have lo < hi")
        return cls(lo, hi)

    @property
    def centre(self) -> np.ndarray:
        result: np.ndarray = (self.lo + self.hi) / 2
        return result

    @property
    def half(self) -> np.ndarray:
        result: np.ndarray = (self.hi - self.lo) / 2
        return result


def complete_rows(values: np.ndarray) -> np.ndarray:
    """CONFIDENTIAL: the rows (n × p) where every value is a number (NaN rows left out)."""
    if values.ndim != 2:
        raise InternalError("rows must be an n × p array")
    kept: np.ndarray = values[~np.isnan(values).any(axis=1)]
    return kept


def grid_units(values: np.ndarray, scaling: Scaling) -> np.ndarray:
    """CONFIDENTIAL: z = rint(Q·(clamp(x) − c)/h), int64 in [−Q, Q], one column per value."""
    clamped = np.clip(values, scaling.lo, scaling.hi)
    units = np.rint((clamped - scaling.centre) / scaling.half * GRID)
    result: np.ndarray = np.clip(units, -GRID, GRID).astype(np.int64)
    return result


def true_moments(values: np.ndarray, scaling: Scaling, pairs: Pairs) -> np.ndarray:
    """CONFIDENTIAL: M_ab = Σ z_a·z_b over the complete rows, for each pair (int64)."""
    rows = complete_rows(values)
    if rows.shape[0] >= EXACT_ROWS:
        raise DataError(f"Regression and PCA take at most {EXACT_ROWS:,} rows.")
    z = grid_units(rows, scaling).astype(np.float64)  # BLAS; exact below 2⁵³ (checked above)
    z = np.hstack([np.full((z.shape[0], 1), float(GRID)), z])
    gram = z.T @ z
    moments: np.ndarray = np.array([gram[a, b] for a, b in pairs]).astype(np.int64)
    return moments


@dataclass(frozen=True)
class MomentMechanism:
    """The noisy moments of p bounded columns: pairs, sensitivity, noise and cost."""

    scaling: Scaling
    pairs: Pairs
    context: StatContext
    sensitivity: Sensitivity
    noise: Noise
    cost: Share

    @property
    def p(self) -> int:
        return int(self.scaling.lo.size)

    @property
    def unit_std(self) -> float:
        """Noise std of one moment on the [−1, 1] scale (grid units / Q²)."""
        return self.noise.std / GRID**2


def calibrate_moments(
    bounds: tuple[tuple[float, float], ...], pairs: Pairs, share: Share, ctx: StatContext
) -> MomentMechanism:
    """The accountant's noise for the moments within the share (scales rounded up)."""
    sens = moment_sensitivity(pairs, ctx)
    return MomentMechanism(Scaling.of(bounds), pairs, ctx, sens, noise_for(share, sens), share)


def preview_adder(rng: np.random.Generator) -> AddNoise:
    """PREVIEW only: numpy's seedable noise (never for anything that leaves the tool)."""

    def add(true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        noisy: np.ndarray = true + noise.kind.preview(rng, noise.scale, true.size)
        return noisy

    return add


def noisy_moments(
    values: np.ndarray, mechanism: MomentMechanism, add_noise: AddNoise
) -> np.ndarray:
    """The moments (grid units) plus the noise `add_noise` draws: secure for a release."""
    true = true_moments(values, mechanism.scaling, mechanism.pairs)
    noisy: np.ndarray = add_noise(true, mechanism.noise, mechanism.sensitivity)
    return noisy.astype(np.float64)


def moment_matrix(moments: np.ndarray, pairs: Pairs, p: int) -> np.ndarray:
    """The symmetric (p+1) × (p+1) matrix Σ v vᵀ on the [−1, 1] scale (v = (1, u)), from the
    moments in grid units; a pair not released (y·y of a regression) is left NaN."""
    matrix = np.full((p + 1, p + 1), np.nan)
    for value, (a, b) in zip(moments.tolist(), pairs, strict=True):
        matrix[a, b] = matrix[b, a] = value / GRID**2
    return matrix


def resample_moments(
    moments: np.ndarray, noise: Noise, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Public post-processing: `draws` copies of the released moments with fresh noise of the
    same law added (a parametric bootstrap: the spread of a statistic computed from them
    around the released one estimates its noise error; no data, no privacy cost)."""
    extra = noise.kind.preview(rng, noise.scale, draws * moments.size).reshape(draws, -1)
    result: np.ndarray = moments[None, :] + extra
    return result
