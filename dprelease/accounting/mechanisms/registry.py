"""The registry of noise mechanisms, and `Noise`: one table's mechanism and scale.

The only place a mechanism's name is looked up. To add a mechanism: write its module (a
`Mechanism` subclass and one instance) and list the instance in `MECHANISMS` and its name
in `MechanismName`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dprelease.accounting.mechanisms.base import Mechanism
from dprelease.accounting.mechanisms.discrete_gaussian import DISCRETE_GAUSSIAN
from dprelease.accounting.mechanisms.discrete_laplace import DISCRETE_LAPLACE
from dprelease.accounting.mechanisms.gaussian import GAUSSIAN
from dprelease.errors import InternalError, quote

MechanismName = Literal["discrete_laplace", "gaussian", "discrete_gaussian"]  # the names, for docs
MECHANISMS: dict[str, Mechanism] = {
    m.name: m for m in (DISCRETE_LAPLACE, GAUSSIAN, DISCRETE_GAUSSIAN)
}


def mechanism(name: str) -> Mechanism:
    """The mechanism called `name`; an unknown name is a bug, never a silent fallback."""
    found = MECHANISMS.get(name)
    if found is None:
        raise InternalError(f"unknown mechanism {quote(name)} (known: {', '.join(MECHANISMS)})")
    return found


@dataclass(frozen=True)
class Noise:
    """The noise added to every cell of one table: a mechanism and its scale (b or σ)."""

    mechanism: str  # a name in MECHANISMS (checked)
    scale: float

    def __post_init__(self) -> None:
        mechanism(self.mechanism)  # refuses an unknown name at once
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise InternalError(f"noise scale must be positive and finite, got {quote(self.scale)}")

    @property
    def kind(self) -> Mechanism:
        """The mechanism object (maps, samplers)."""
        return mechanism(self.mechanism)

    @property
    def variance(self) -> float:
        return self.kind.variance(self.scale)

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    def moe(self, alpha: float) -> float:
        """Half-width a of the interval that holds with probability 1 − α for one cell."""
        return self.kind.moe(self.scale, alpha)

    def moe_table(self, alpha: float, cells: int) -> float:
        """Half-width that holds for all cells of a table at once (union bound: α / cells)."""
        return self.moe(alpha / max(cells, 1))  # 0 cells: a domain not yet discovered

    def preview(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Fast pseudo-random noise for a PREVIEW or a simulation only: never a release (the
        release's secure draw is `dprelease.release.noise`)."""
        return self.kind.preview(rng, self.scale, size)
