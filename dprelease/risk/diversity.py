"""CONFIDENTIAL: l-diversity of the sensitive attribute within the equivalence classes
(Machanavajjhala et al. 2006).

- distinct l: the fewest distinct sensitive values in any class;
- entropy l: exp(min over classes of H(class)), H = −Σ p ln p (the same as 2^H with log₂);
  a table is entropy l-diverse when every class has H ≥ ln l;
- recursive (c, l): in every class, with r₁ ≥ r₂ ≥ … ≥ r_m the counts of its values,
  r₁ < c·(r_l + r_{l+1} + … + r_m). A class with fewer than l distinct values fails it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dprelease.errors import DataError, quote
from dprelease.risk.classes import ClassValues


@dataclass(frozen=True)
class LDiversity:
    """CONFIDENTIAL: the l-diversity measures of one table, for one c and one l."""

    l_distinct: int
    l_entropy: float
    c: float
    l: int  # noqa: E741
    recursive_cl: bool
    classes_failing_recursive: int
    distinct_per_class: np.ndarray = field(repr=False)
    entropy_per_class: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, float | int | bool]:
        return {
            "l_distinct": self.l_distinct,
            "l_entropy": self.l_entropy,
            "c": self.c,
            "l": self.l,
            "recursive_cl": self.recursive_cl,
            "classes_failing_recursive_cl": self.classes_failing_recursive,
        }


def check_c(c: float) -> None:
    if not (isinstance(c, int | float) and math.isfinite(c) and c > 0):
        raise DataError(f"c must be a positive number (e.g. 2), got {quote(c)}.")


def l_diversity(values: ClassValues, *, c: float, l: int) -> LDiversity:  # noqa: E741
    check_c(c)
    if l < 1:
        raise DataError(f"l must be a whole number of at least 1, got {l}.")
    classes = len(values.class_sizes)
    distinct = np.bincount(values.pair_class, minlength=classes)
    share = values.pair_count / values.class_sizes[values.pair_class]
    entropy = -np.bincount(values.pair_class, weights=share * np.log(share), minlength=classes)
    entropy = np.maximum(entropy, 0.0)  # −0.0 and rounding below zero for one-value classes
    # rank of each (class, value) within its class, most frequent first
    order = np.lexsort((-values.pair_count, values.pair_class))
    sorted_class = values.pair_class[order]
    sorted_count = values.pair_count[order]
    starts = np.searchsorted(sorted_class, np.arange(classes))
    rank = np.arange(len(order)) - starts[sorted_class]
    top = sorted_count[rank == 0]
    tail = np.bincount(
        sorted_class, weights=np.where(rank >= l - 1, sorted_count, 0), minlength=classes
    )
    holds = top < c * tail
    return LDiversity(
        l_distinct=int(distinct.min()) if classes else 0,
        l_entropy=float(math.exp(float(entropy.min()))) if classes else 0.0,
        c=float(c),
        l=int(l),
        recursive_cl=bool(holds.all()),
        classes_failing_recursive=int((~holds).sum()),
        distinct_per_class=distinct,
        entropy_per_class=entropy,
    )
