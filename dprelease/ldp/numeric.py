"""Means of bounded numbers: 1BitMean (Ding, Kulkarni & Yekhanin 2017, Microsoft telemetry)
and the one-dimensional mechanism of Duchi, Jordan & Wainwright (2013).

1BitMean, x ∈ [0, m]: send 1 with probability π(x) = 1/(e^ε+1) + (x/m)·(e^ε−1)/(e^ε+1).
    mean estimate  μ̂ = (m/n)·Σ (b_i·(e^ε+1) − 1)/(e^ε−1)
    Var[μ̂] = (m²/n²)·((e^ε+1)/(e^ε−1))²·Σ π(x_i)(1 − π(x_i))   (exact)
           ≤ m²(e^ε+1)² / (4n(e^ε−1)²)                              (π = 1/2)
Duchi et al., x ∈ [−1, 1]: send ±C, C = (e^ε+1)/(e^ε−1), +C with probability
    1/2 + x(e^ε−1)/(2(e^ε+1)). Each report is unbiased for x:
    Var[μ̂] = (1/n²)·Σ (C² − x_i²)  (exact)  ≤ C²/n.
The two are one mechanism under x ↦ 2x/m − 1 (a test checks the variances agree); both
send one bit, and the ratio π(m)/π(0) = e^ε at the ends of the range is tight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprelease.ldp.base import LdpError


def _bounded(values: np.ndarray, low: float, high: float) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0 or not np.all((values >= low) & (values <= high)):
        raise LdpError(f"Every value must lie in [{low:g}, {high:g}] (clip them first).")
    return values


@dataclass(frozen=True)
class OneBitMean:
    """1BitMean for values in [0, upper]."""

    upper: float = 1.0
    name = "1BitMean"

    def one_chance(self, values: np.ndarray, epsilon: float) -> np.ndarray:
        e = math.exp(epsilon)
        return 1 / (e + 1) + np.asarray(values) / self.upper * (e - 1) / (e + 1)

    def randomise(self, values: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        chance = self.one_chance(_bounded(values, 0.0, self.upper), epsilon)
        return rng.random(chance.shape) < chance

    def estimate_mean(self, bits: np.ndarray, epsilon: float) -> np.ndarray:
        e = math.exp(epsilon)
        mean: np.ndarray = self.upper * (np.mean(bits, axis=-1) * (e + 1) - 1) / (e - 1)
        return mean

    def variance(self, values: np.ndarray, epsilon: float) -> float:
        e = math.exp(epsilon)
        chance = self.one_chance(_bounded(values, 0.0, self.upper), epsilon)
        n = chance.size
        return float(
            (self.upper / n) ** 2 * ((e + 1) / (e - 1)) ** 2 * np.sum(chance * (1 - chance))
        )

    def variance_bound(self, n: int, epsilon: float) -> float:
        e = math.exp(epsilon)
        return self.upper**2 * (e + 1) ** 2 / (4 * n * (e - 1) ** 2)

    def output_distribution(self, inputs: np.ndarray, epsilon: float) -> np.ndarray:
        chance = self.one_chance(inputs, epsilon)
        return np.stack([1 - chance, chance], axis=1)


@dataclass(frozen=True)
class DuchiMean:
    """Duchi et al.'s one-dimensional mechanism for values in [−1, 1]."""

    name = "Duchi"

    @staticmethod
    def magnitude(epsilon: float) -> float:
        return (math.exp(epsilon) + 1) / (math.exp(epsilon) - 1)

    def plus_chance(self, values: np.ndarray, epsilon: float) -> np.ndarray:
        return 0.5 + np.asarray(values) / (2 * self.magnitude(epsilon))

    def randomise(self, values: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        chance = self.plus_chance(_bounded(values, -1.0, 1.0), epsilon)
        sign = np.where(rng.random(chance.shape) < chance, 1.0, -1.0)
        return sign * self.magnitude(epsilon)

    @staticmethod
    def estimate_mean(reports: np.ndarray) -> np.ndarray:
        mean: np.ndarray = np.mean(reports, axis=-1)
        return mean

    def variance(self, values: np.ndarray, epsilon: float) -> float:
        values = _bounded(values, -1.0, 1.0)
        return float(np.sum(self.magnitude(epsilon) ** 2 - values**2) / values.size**2)

    def variance_bound(self, n: int, epsilon: float) -> float:
        return self.magnitude(epsilon) ** 2 / n

    def output_distribution(self, inputs: np.ndarray, epsilon: float) -> np.ndarray:
        chance = self.plus_chance(inputs, epsilon)
        return np.stack([1 - chance, chance], axis=1)
