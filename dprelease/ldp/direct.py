"""Generalised randomized response (GRR, direct encoding; Warner 1965 for d = 2).

Keep the true value with p = e^ε / (e^ε + d − 1), else report one of the other d − 1 values
uniformly: each with q = 1 / (e^ε + d − 1). A report supports only the value it names, so
q* = q and p/q = e^ε exactly.

    Var*[ĉ(v)] = n·q(1−q)/(p−q)² = n·(d − 2 + e^ε) / (e^ε − 1)²
"""

from __future__ import annotations

import math

import numpy as np

from dprelease.ldp.base import FrequencyProtocol, Reports, Support, batched_bincount


class DirectEncoding(FrequencyProtocol):
    name = "GRR"
    title = "generalised randomized response (direct encoding)"

    def probabilities(self, epsilon: float, d: int) -> Support:
        denominator = math.exp(epsilon) + d - 1
        return Support(p=math.exp(epsilon) / denominator, q=1 / denominator)

    def randomise(
        self, values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
    ) -> Reports:
        p = self.probabilities(epsilon, d).p
        keep = rng.random(values.shape) < p
        # Another value, uniform among the d − 1 others: shift by 1..d−1 modulo d.
        other = (values + rng.integers(1, d, size=values.shape)) % d
        return (np.where(keep, values, other),)

    def support(self, reports: Reports, epsilon: float, d: int) -> np.ndarray:
        return batched_bincount(reports[0], d)

    def output_distribution(self, epsilon: float, d: int) -> np.ndarray:
        support = self.probabilities(epsilon, d)
        table = np.full((d, d), support.q)
        np.fill_diagonal(table, support.p)
        return table
