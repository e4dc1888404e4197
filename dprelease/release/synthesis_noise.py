"""The secure noise a release hands to the synthesis share (issue 38.6,
`dprelease.synthetic.measure.SynthesisNoise`):

- counts: `noise.secure_noisy_counts` (exact tables or OpenDP, privacy map checked first);
- choose: OpenDP's `make_noisy_max` (exact Gumbel report-noisy-max, the exponential
  mechanism) under the max divergence, after its privacy map at the scores' sensitivity is
  checked against the ε the allocation accounted.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import InternalError
from dprelease.plan.table_spec import Sensitivity
from dprelease.release.noise import opendp_prelude, secure_noisy_counts

_MAP_ROOM = 1 + Fraction(1, 10**9)


class SecureSynthesisNoise:
    """Noise for a release: OpenDP and the OS CSPRNG, never a seedable generator."""

    secure = True

    def counts(self, true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        return secure_noisy_counts(true, noise, sens.l1, sens.l2_squared)

    def choose(self, scores: np.ndarray, scale: float, epsilon: Fraction, d_in: int) -> int:
        dp = opendp_prelude()
        measurement = dp.m.make_noisy_max(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.linf_distance(T=float),
            dp.max_divergence(),
            scale=float(scale),
        )
        mapped = Fraction(float(measurement.map(float(d_in))))
        if mapped > epsilon * _MAP_ROOM:
            raise InternalError(
                f"OpenDP's noisy-max map gives {float(mapped)!r}, we accounted {float(epsilon)!r}"
            )
        return int(measurement([float(s) for s in scores]))


SECURE_SYNTHESIS = SecureSynthesisNoise()
