"""The secure noise a release hands to statistics (`dprelease.stats.noise.StatNoise`).

- counts: `noise.secure_noisy_counts` (exact tables or OpenDP, privacy map checked first);
- quantile: OpenDP's `make_private_quantile` (exact Gumbel noisy max) under the zCDP measure,
  after its privacy map is checked against the ρ the statistic accounted;
- unit_noise: standard Laplace or Cauchy draws from the OS CSPRNG (`os.urandom`): uniforms
  u ∈ (0, 1) on the 2⁻⁵³ grid, Laplace = ±ln(1/u'), Cauchy = tan(π(u − ½)). These are
  floating-point continuous samplers, not exact ones: the statistics that use them (smooth
  sensitivity) round their released value to their public resolution afterwards, which
  removes the low-order float bits an attack on float noise reads (Mironov 2012) from the
  output, though it is not a proof of exactness like the discrete samplers'.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import InternalError
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.exact_sampler import os_random_words
from dprelease.release.noise import opendp_prelude, secure_noisy_counts
from dprelease.stats.noise import Draw, UnitLaw

_MAP_ROOM = 1 + Fraction(1, 10**9)


def secure_uniforms(size: int) -> np.ndarray:
    """Uniforms in (0, 1) from the OS CSPRNG: (k + ½)/2⁵³ for 53 random bits k."""
    words = os_random_words(size) >> np.uint64(11)
    uniforms: np.ndarray = (words.astype(np.float64) + 0.5) / 2.0**53
    return uniforms


class SecureNoise:
    """Noise for a release: OpenDP and the OS CSPRNG, never a seedable generator."""

    secure = True

    def counts(self, true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        return secure_noisy_counts(true, noise, sens.l1, sens.l2_squared)

    def quantile(
        self, grid: np.ndarray, q: Fraction, scale: float, d_in: int, rho: Fraction
    ) -> Draw:
        """OpenDP's exact, secure Gumbel noisy max over the grid (built once, drawn per
        group), after its privacy map at d_in is checked against the accounted ρ."""
        dp = opendp_prelude()
        measurement = dp.m.make_private_quantile(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.symmetric_distance(),
            dp.zero_concentrated_divergence(),
            candidates=[float(c) for c in grid],
            alpha=float(q),
            scale=float(scale),
        )
        mapped = Fraction(float(measurement.map(d_in)))
        if mapped > rho * _MAP_ROOM:
            raise InternalError(
                f"OpenDP's quantile map gives {float(mapped)!r}, we accounted {float(rho)!r}"
            )

        def draw(values: np.ndarray) -> float:
            return float(measurement([float(v) for v in values]))

        return draw

    def unit_noise(self, law: UnitLaw, size: int) -> np.ndarray:
        u = secure_uniforms(size)
        if law == "cauchy":
            cauchy: np.ndarray = np.tan(np.pi * (u - 0.5))
            return cauchy
        sign = np.where(secure_uniforms(size) < 0.5, -1.0, 1.0)
        laplace: np.ndarray = sign * -np.log(u)
        return laplace


SECURE = SecureNoise()
