"""CONFIDENTIAL: t-closeness (Li, Li, Venkatasubramanian, ICDE 2007): the largest Earth
Mover's Distance between a class's distribution P of the sensitive attribute and the whole
table's distribution Q.

- equal ground distance (nominal values): EMD = ½ Σᵢ |pᵢ − qᵢ|;
- ordered distance (numbers, bins, ordinal values; value i and j at distance |i − j|/(m − 1)):
  EMD = 1/(m − 1) · Σ_{i=1}^{m−1} |Σ_{j≤i} (pⱼ − qⱼ)|.

Both lie in [0, 1]. The ordered sum is evaluated per class on the stretches between the
values the class holds (where its cumulative share is constant), with prefix sums of Q's
cumulative shares, so the cost grows with the (class, value) pairs, not classes × values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprelease.risk.classes import ClassValues


@dataclass(frozen=True)
class TCloseness:
    """CONFIDENTIAL: t (the largest class EMD) and each class's EMD."""

    t: float
    ground: str  # "equal" or "ordered"
    emd_per_class: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, float | str]:
        return {"t_closeness": self.t, "t_ground_distance": self.ground}


def _equal_emd(values: ClassValues) -> np.ndarray:
    """½ Σ |p − q| = ½ (1 + Σ over the class's values of (|p − q| − q)): values a class does
    not hold contribute their q, which sums to 1 minus the q of the values it holds."""
    classes = len(values.class_sizes)
    p = values.pair_count / values.class_sizes[values.pair_class]
    q = values.overall[values.pair_value]
    inside = np.bincount(values.pair_class, weights=np.abs(p - q) - q, minlength=classes)
    result: np.ndarray = 0.5 * (1.0 + inside)
    return result


def _ordered_emd(values: ClassValues) -> np.ndarray:
    m = values.values
    classes = len(values.class_sizes)
    if m < 2:
        return np.zeros(classes)
    cum_q = np.cumsum(values.overall)[: m - 1]  # Q(i) for i = 0..m-2
    prefix = np.concatenate([[0.0], np.cumsum(cum_q)])  # prefix[i] = Σ_{j<i} Q(j)

    def stretch(level: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Σ_{i∈[lo,hi)} |level − Q(i)|; Q is non-decreasing, so split where it passes level."""
        cut = np.clip(np.searchsorted(cum_q, level, side="left"), lo, hi)
        below = level * (cut - lo) - (prefix[cut] - prefix[lo])
        above = (prefix[hi] - prefix[cut]) - level * (hi - cut)
        result: np.ndarray = below + above
        return result

    p = values.pair_count / values.class_sizes[values.pair_class]
    # cumulative share of the class after each of its values (pairs are sorted by class, value)
    starts = np.searchsorted(values.pair_class, np.arange(classes))
    running = np.cumsum(p)
    before_class = np.concatenate([[0.0], running])[starts][values.pair_class]
    level = running - before_class
    first = np.zeros(len(p), bool)
    first[starts[starts < len(p)]] = True
    last_of_class = np.ones(len(p), bool)
    last_of_class[:-1] = values.pair_class[1:] != values.pair_class[:-1]
    nxt = np.empty(len(p), np.int64)
    nxt[:-1] = values.pair_value[1:]
    hi = np.where(last_of_class, m - 1, np.minimum(nxt, m - 1))
    lo = np.minimum(values.pair_value, m - 1)
    total = np.bincount(
        values.pair_class, weights=stretch(np.clip(level, 0, 1), lo, hi), minlength=classes
    )
    # the stretch before each class's first value, where its cumulative share is 0
    first_value = np.minimum(values.pair_value[first], m - 1)
    total[values.pair_class[first]] += prefix[first_value]
    emd: np.ndarray = total / (m - 1)
    return emd


def t_closeness(values: ClassValues, *, ordered: bool) -> TCloseness:
    emd = _ordered_emd(values) if ordered else _equal_emd(values)
    emd = np.clip(emd, 0.0, 1.0)  # float rounding only
    return TCloseness(float(emd.max()) if len(emd) else 0.0, "ordered" if ordered else "equal", emd)
