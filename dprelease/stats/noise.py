"""Where a statistic's draw gets its noise: handed in, secure (a release) or numpy (a preview).

A statistic is written once (`draw(data, mechanism, noise)`); the caller hands it the noise.
The release layer's `dprelease.release.stat_noise.SECURE` draws from OpenDP and the OS
CSPRNG; `PreviewNoise` here draws from a seedable numpy generator, for a data holder's
PREVIEW only. So this package needs nothing from `release/` and sits below it (the module
map in `dprelease/__init__.py`).

- `counts`: whole-number answers (counts, fixed-point sums) plus the accountant's noise;
- `quantile`: one exponential-mechanism draw over a public grid (Gumbel noisy max);
- `unit_noise`: `size` standard draws of a continuous noise law (`laplace` or `cauchy`), to
  be multiplied by a public or smooth scale (smooth sensitivity).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Literal, Protocol

import numpy as np

from dprelease.accounting.mechanisms.preview import PreviewDraws
from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.table_spec import Sensitivity
from dprelease.stats.ranks import rank_errors

Draw = Callable[[np.ndarray], float]  # one group's values -> one released candidate
UnitLaw = Literal["laplace", "cauchy"]


class StatNoise(Protocol):
    """The noise one draw of statistics uses. `secure` is False for a preview."""

    secure: bool

    def counts(self, true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        """Whole numbers plus fresh noise of the accountant's mechanism."""
        ...

    def quantile(
        self, grid: np.ndarray, q: Fraction, scale: float, d_in: int, rho: Fraction
    ) -> Draw:
        """A sampler of P(c) ∝ exp(−|rank(c) − q·n|/scale) over the grid; `rho` is the zCDP
        cost the statistic accounted for d_in rows (a secure sampler checks its own map)."""
        ...

    def unit_noise(self, law: UnitLaw, size: int) -> np.ndarray:
        """`size` draws of the standard law: Laplace (density ½e^{−|z|}) or Cauchy
        (density 1/(π(1 + z²)))."""
        ...


class PreviewNoise(PreviewDraws):
    """numpy's pseudo-random noise with a seedable generator: for a PREVIEW only."""

    def quantile(
        self, grid: np.ndarray, q: Fraction, scale: float, d_in: int, rho: Fraction
    ) -> Draw:
        def draw(values: np.ndarray) -> float:
            noisy = -rank_errors(values, grid, q) / scale + self.rng.gumbel(size=grid.size)
            return float(grid[int(np.argmax(noisy))])

        return draw

    def unit_noise(self, law: UnitLaw, size: int) -> np.ndarray:
        # numpy's PRNG (floating point): a PREVIEW only, never a release (SECURE draws those)
        if law == "laplace":
            return self.rng.laplace(size=size)  # PREVIEW only
        return self.rng.standard_cauchy(size=size)  # PREVIEW only
