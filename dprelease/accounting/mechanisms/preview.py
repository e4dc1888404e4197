"""numpy's pseudo-random draws of the mechanisms' noise, for a data holder's PREVIEW only:
never a release (a release draws through `dprelease.release.noise`'s secure samplers).

`PreviewDraws` is the counts part that the statistics' preview noise (`stats.noise`) and the
synthesis' (`synthetic.measure`) share, one floor below both."""

from __future__ import annotations

import numpy as np

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.table_spec import Sensitivity


class PreviewDraws:
    """numpy's pseudo-random noise with a seedable generator: for a PREVIEW only."""

    secure = False

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def counts(self, true: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        noisy: np.ndarray = true + noise.preview(true.size, self.rng)  # a PREVIEW only
        return noisy
