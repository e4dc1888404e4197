"""What every noise mechanism provides, and the rounding helpers their inverses share.

A mechanism is one object (see `registry`): the rest of the code asks it for its privacy
map, variance, margin of error, OpenDP measurement and preview sampler, and never compares
its name. Adding a mechanism means writing its module and listing it in the registry.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dprelease.accounting.composition import zcdp_to_epsilon
from dprelease.errors import InternalError
from dprelease.plan.table_spec import Sensitivity


def scale_up_until(scale: float, ok: Callable[[float], bool]) -> float:
    """Nudge a float scale up until the exact check `ok(scale)` holds (a few steps at most)."""
    for _ in range(64):
        if ok(scale):
            return scale
        scale = math.nextafter(scale, math.inf)
    raise InternalError("could not round a noise scale up to its budget")


def raise_until(value: float, ok: Callable[[float], bool]) -> float:
    """Raise a float found by bisection on a float formula until the high-precision check
    `ok(value)` holds: the float δ can be ~1e-10 off (relative) in the far tails."""
    step = 2.0**-45
    for _ in range(64):
        if ok(value):
            return value
        value *= 1 + step
        step *= 2
    raise InternalError("could not push a Gaussian bound up to its exact check")


class Mechanism(ABC):
    """One noise mechanism: its maps (pure functions of the scale) and its samplers.

    `scale` is the mechanism's own parameter (b for Laplace, σ for Gaussian); `sens` the
    sensitivity of one table of counts (exact: L1 and L2² are integers).
    """

    name: str
    label: str  # how the report names it
    integer: bool  # adds integer noise to integer counts (else float noise)

    @abstractmethod
    def variance(self, scale: float) -> float:
        """Variance of the noise added to one cell."""

    @abstractmethod
    def moe(self, scale: float, alpha: float) -> float:
        """Half-width a of the interval that holds with probability 1 − α for one cell."""

    @abstractmethod
    def pure_epsilon(self, scale: float, sens: Sensitivity) -> Fraction | None:
        """ε of pure DP, exactly (None: the mechanism has no pure guarantee)."""

    @abstractmethod
    def zcdp_rho(self, scale: float, sens: Sensitivity) -> float:
        """ρ of zero-concentrated DP, rounded up to a float."""

    def epsilon_at(self, scale: float, sens: Sensitivity, delta: float) -> float:
        """ε at δ of one table alone: through zCDP (the CKS conversion) unless overridden."""
        return zcdp_to_epsilon(self.zcdp_rho(scale, sens), delta)[0]

    composes_as_gaussian = False  # True: tables compose exactly into one Gaussian (PLD)

    @abstractmethod
    def measurement(self, dp: Any, scale: float) -> Any:
        """OpenDP's measurement that adds this noise to a vector of counts (for a release)."""

    def exact_sampler(self, samplers: Any, scale: float, cells: int) -> Any:
        """This noise's exact, secure, vectorised sampler for `cells` draws from `samplers`
        (the module `dprelease.release.exact_noise`, passed in as OpenDP's prelude is), or
        None when it has none or OpenDP is the better choice: OpenDP draws it then."""
        return None

    @abstractmethod
    def opendp_map_check(self, scale: float, sens: Sensitivity) -> tuple[int | float, float] | None:
        """(d_in to ask OpenDP's privacy map, the value our own map accounts), or None when
        OpenDP's map cannot be asked (an L2 sensitivity that is not a whole number)."""

    @abstractmethod
    def preview(self, rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
        """Fast pseudo-random noise from numpy for a PREVIEW only: never for a release."""


def whole_l2(sens: Sensitivity) -> int | None:
    """L2 as an integer when it is one (OpenDP's integer L2 distance needs a whole number)."""
    l2 = math.isqrt(sens.l2_squared)
    return l2 if l2 * l2 == sens.l2_squared else None


def gaussian_rho(scale: float, sens: Sensitivity) -> Fraction:
    """ρ = Δ₂² / (2σ²), exactly: the zCDP of the Gaussian, discrete or continuous."""
    return Fraction(sens.l2_squared) / (2 * Fraction(scale) ** 2)
