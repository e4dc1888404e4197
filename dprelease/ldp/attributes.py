"""Several attributes per respondent: split ε across them, or let each respondent report one
attribute, chosen at random, with the whole ε (Wang et al., ICDE 2019, "sample").

For k attributes, n respondents and a count n_v of attribute j, with V(ε, n, n_v) the exact
variance of the best protocol's estimate (`Support.variance_exact`):
- split: every respondent reports all k, each with ε/k:   Var = V(ε/k, n, n_v)
- sample: each respondent reports attribute j with probability 1/k, with ε; the count is
  scaled by k. Averaging over the random choice gives Var = k·V(ε, n, n_v) + n_v·(k − 1),
  the last term from the binomial number of v-holders who were asked about j.
The schemes are compared at the count of an average value, n_v = n/d_j (at n_v = 0 the
sampling term vanishes and sampling would look better than it is for common values).
Sampling wins unless ε is large: for small ε, V(ε/k) ≈ k²·V(ε), against k·V(ε).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dprelease.ldp.base import (
    LdpError,
    check_domain_size,
    check_epsilon,
    check_respondents,
    secure_generator,
)
from dprelease.ldp.planner import best_of, protocol_accuracies
from dprelease.ldp.registry import PROTOCOLS, protocol
from dprelease.ldp.simulation import MISSING, EncodedColumn, project_to_simplex


@dataclass(frozen=True)
class SchemeAccuracy:
    """One scheme: per attribute, the best protocol and the Var of an average value's count."""

    scheme: str
    protocols: tuple[str, ...]
    variances: tuple[float, ...]

    @property
    def total_variance(self) -> float:
        return sum(self.variances)


@dataclass(frozen=True)
class AttributeSchemes:
    split: SchemeAccuracy
    sample: SchemeAccuracy

    @property
    def better(self) -> str:
        return "sample" if self.sample.total_variance <= self.split.total_variance else "split"

    def answer(self) -> str:
        k = len(self.split.variances)
        ratio = self.split.total_variance / self.sample.total_variance
        if self.better == "sample":
            return (
                f"Sample one attribute per respondent: the summed variance over the {k} "
                f"attributes is {ratio:.3g}× lower than splitting ε into {k} parts."
            )
        return (
            f"Split ε across the {k} attributes: the summed variance is {1 / ratio:.3g}× lower "
            "than letting each respondent report one attribute."
        )


def compare_attribute_schemes(
    epsilon: float, domain_sizes: Sequence[int], n: int, confidence: float = 0.95
) -> AttributeSchemes:
    epsilon, n = check_epsilon(epsilon), check_respondents(n)
    if len(domain_sizes) < 2:
        raise LdpError("Compare schemes for at least 2 attributes.")
    sizes = [check_domain_size(d) for d in domain_sizes]
    k = len(sizes)
    split_names, split_variances, sample_names, sample_variances = [], [], [], []
    for d in sizes:
        average = n / d
        best = best_of(protocol_accuracies(epsilon / k, d, n, confidence)).name
        split_names.append(best)
        split_variances.append(
            PROTOCOLS[best].probabilities(epsilon / k, d).variance_exact(n, average)
        )
        best = best_of(protocol_accuracies(epsilon, d, n, confidence)).name
        sample_names.append(best)
        exact = PROTOCOLS[best].probabilities(epsilon, d).variance_exact(n, average)
        sample_variances.append(k * exact + average * (k - 1))
    return AttributeSchemes(
        split=SchemeAccuracy("split", tuple(split_names), tuple(split_variances)),
        sample=SchemeAccuracy("sample", tuple(sample_names), tuple(sample_variances)),
    )


def simulate_schemes(
    columns: Sequence[EncodedColumn],
    protocol_name: str,
    epsilon: float,
    rng: np.random.Generator | None = None,
) -> dict[str, tuple[float, ...]]:
    """CONFIDENTIAL: per scheme, the RMSE per cell of each column's projected estimate against
    the truth, on the rows that have a value in every column's domain."""
    if len(columns) < 2:
        raise LdpError("Simulate the schemes on at least 2 columns.")
    chosen, epsilon = protocol(protocol_name), check_epsilon(epsilon)
    rng = rng or secure_generator()
    kept = np.logical_and.reduce([c.all_codes != MISSING for c in columns])
    n, k = int(kept.sum()), len(columns)
    if n == 0:
        raise LdpError("No row has a value in the domain of every chosen column.")
    asked = rng.integers(0, k, size=n)  # sample: the one attribute each respondent reports
    rmse: dict[str, list[float]] = {"split": [], "sample": []}
    for j, column in enumerate(columns):
        codes, d = column.all_codes[kept], column.domain_size
        truth = np.bincount(codes, minlength=d)
        split = chosen.estimate_counts(codes, epsilon / k, d, rng)
        sample = k * chosen.estimate_counts(codes[asked == j], epsilon, d, rng)
        for scheme, estimate in (("split", split), ("sample", sample)):
            error = project_to_simplex(estimate, n) - truth
            rmse[scheme].append(float(np.sqrt(np.mean(error**2))))
    return {scheme: tuple(values) for scheme, values in rmse.items()}
