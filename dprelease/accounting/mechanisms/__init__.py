"""Noise mechanisms: one module each, one object each, listed in the registry.

| mechanism | scale | privacy map | accounting |
|---|---|---|---|
| discrete Laplace (geometric) | b | ε = Δ₁ / b | pure, advanced |
| Gaussian | σ | analytic (Balle & Wang): δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) | approx |
| discrete Gaussian | σ | ρ = Δ₂² / (2σ²) (Canonne, Kamath & Steinke 2020) | zcdp |

Inverses round the noise scale *up* and are checked with exact arithmetic, so the privacy a
scale really buys never exceeds the budget it was computed from. Sampling for a release is
drawn in `dprelease.release.noise` with the mechanism's exact table sampler
(`Mechanism.exact_sampler`) or OpenDP's measurement (`Mechanism.measurement`);
`Mechanism.preview` is numpy's, for previews only.
"""

from dprelease.accounting.mechanisms.base import Mechanism
from dprelease.accounting.mechanisms.discrete_gaussian import (
    DISCRETE_GAUSSIAN,
    discrete_gaussian_moe,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    discrete_gaussian_tail,
    discrete_gaussian_variance,
)
from dprelease.accounting.mechanisms.discrete_laplace import (
    DISCRETE_LAPLACE,
    discrete_laplace_moe,
    discrete_laplace_variance,
    laplace_epsilon,
    laplace_scale,
)
from dprelease.accounting.mechanisms.gaussian import (
    GAUSSIAN,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_moe,
    gaussian_sigma,
)
from dprelease.accounting.mechanisms.registry import MECHANISMS, MechanismName, Noise, mechanism

__all__ = [
    "DISCRETE_GAUSSIAN",
    "DISCRETE_LAPLACE",
    "GAUSSIAN",
    "MECHANISMS",
    "Mechanism",
    "MechanismName",
    "Noise",
    "discrete_gaussian_moe",
    "discrete_gaussian_rho",
    "discrete_gaussian_sigma",
    "discrete_gaussian_tail",
    "discrete_gaussian_variance",
    "discrete_laplace_moe",
    "discrete_laplace_variance",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_moe",
    "gaussian_sigma",
    "laplace_epsilon",
    "laplace_scale",
    "mechanism",
]
