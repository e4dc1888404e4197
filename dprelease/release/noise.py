"""Drawing noise: OpenDP's exact, secure samplers for a release; numpy for previews only.

`secure_noisy_counts` is the only sampler a release may use: OpenDP draws from a
cryptographically secure source with exact (integer or arbitrary-precision) arithmetic, so
the noise has no floating-point leaks and cannot be reproduced. Before it draws, the
measurement's own privacy map is checked against ours, so a wrong scale cannot slip through.

`preview_noise` is numpy's fast pseudo-random sampler with a seedable generator: fine for a
data holder's preview, never for anything that leaves the tool (the release code never calls
it, and the preview type cannot be exported).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dprelease.accounting.mechanisms.formulas import Noise
from dprelease.errors import InternalError


@functools.cache
def _opendp_prelude() -> Any:
    """OpenDP, imported on first use (it is only needed when a release is drawn)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def warm_up() -> None:
    """Import OpenDP now (e.g. in a thread while the data are read): saves start-up time."""
    _opendp_prelude()


def _opendp_measurement(noise: Noise) -> Any:
    dp = _opendp_prelude()
    if noise.mechanism == "discrete_laplace":
        domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
        return dp.m.make_laplace(domain, dp.l1_distance(T=dp.i64), scale=noise.scale)
    if noise.mechanism == "discrete_gaussian":
        domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
        return dp.m.make_gaussian(domain, dp.l2_distance(T=dp.i64), scale=noise.scale)
    if noise.mechanism == "gaussian":
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=noise.scale)
    if noise.mechanism == "laplace":
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=noise.scale)
    raise InternalError(f"unknown mechanism {noise.mechanism!r}")


def _check_privacy_map(measurement: Any, noise: Noise, l1: int, l2_squared: int) -> None:
    """OpenDP's privacy map must agree with ours (ε = Δ₁/b, or ρ = Δ₂²/2σ²)."""
    if noise.mechanism in ("discrete_laplace", "laplace"):
        d_in: int | float = l1 if noise.mechanism == "discrete_laplace" else float(l1)
        expected = l1 / noise.scale
    else:
        l2 = math.isqrt(l2_squared)
        if l2 * l2 != l2_squared:  # OpenDP's integer L2 distance needs a whole number
            return
        d_in = l2 if noise.mechanism == "discrete_gaussian" else float(l2)
        expected = l2_squared / (2 * noise.scale**2)
    mapped = float(measurement.map(d_in))
    if mapped > expected * (1 + 1e-9):
        raise InternalError(f"OpenDP's privacy map gives {mapped!r}, we accounted {expected!r}")


def secure_noisy_counts(
    true_counts: np.ndarray, noise: Noise, l1: int, l2_squared: int
) -> np.ndarray:
    """Counts plus fresh noise from OpenDP's secure sampler (int64, or float64 for Gaussian)."""
    measurement = _opendp_measurement(noise)
    _check_privacy_map(measurement, noise, l1, l2_squared)
    if noise.mechanism in ("discrete_laplace", "discrete_gaussian"):
        noisy = measurement(true_counts.astype(np.int64).tolist())
        return np.asarray(noisy, dtype=np.int64)
    noisy = measurement(true_counts.astype(np.float64).tolist())
    return np.asarray(noisy, dtype=np.float64)


# --- previews ---------------------------------------------------------------------------


def _preview_discrete_laplace(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Difference of two geometric variables: P(x) ∝ exp(−|x|/b)."""
    p = -math.expm1(-1 / scale)
    return rng.geometric(p, size) - rng.geometric(p, size)


def _preview_discrete_gaussian(rng: np.random.Generator, sigma: float, size: int) -> np.ndarray:
    """Rejection from a discrete Laplace (Canonne, Kamath & Steinke 2020, Algorithm 3)."""
    t = math.floor(sigma) + 1
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        want = max(64, int((size - filled) * 1.6))
        candidates = _preview_discrete_laplace(rng, float(t), want)
        keep = np.exp(-((np.abs(candidates) - sigma**2 / t) ** 2) / (2 * sigma**2))
        accepted = candidates[rng.random(want) < keep][: size - filled]
        out[filled : filled + accepted.size] = accepted
        filled += accepted.size
    return out


def preview_noise(noise: Noise, size: int, rng: np.random.Generator) -> np.ndarray:
    """Fast pseudo-random noise for a PREVIEW only: never used for a release."""
    if noise.mechanism == "discrete_laplace":
        return _preview_discrete_laplace(rng, noise.scale, size)
    if noise.mechanism == "discrete_gaussian":
        return _preview_discrete_gaussian(rng, noise.scale, size)
    if noise.mechanism == "gaussian":
        return rng.normal(0.0, noise.scale, size)  # preview only
    return rng.laplace(0.0, noise.scale, size)  # preview only
