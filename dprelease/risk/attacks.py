"""CONFIDENTIAL: the homogeneity and skewness attacks on k-anonymous data, made concrete.

An attacker who knows a person's quasi-identifiers (and that they are in the table) finds their
equivalence class and reads its distribution of the sensitive attribute:
- homogeneity: every record of the class shares one value, so the attacker learns it for sure;
- skewness: the class's most common value is far more common than in the whole table
  (posterior share / prior share = lift), so the attacker's belief jumps although the class
  may be diverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprelease.risk.classes import Classes, ClassValues, RiskInput, labels_of_class

CONFIDENT = 0.9  # an attacker "learns" a value when the class puts at least this share on it


@dataclass(frozen=True)
class ClassDisclosure:
    """CONFIDENTIAL: what an attacker learns about the members of one class."""

    qi: dict[str, str]
    size: int
    value: str  # the class's most common sensitive value
    posterior: float  # its share in the class: the attacker's belief about a member
    prior: float  # its share in the whole table: the belief without the class
    lift: float


@dataclass(frozen=True)
class Attacks:
    """CONFIDENTIAL: summary of the homogeneity and skewness attacks."""

    homogeneous_classes: int
    homogeneous_rows: int
    confident_rows: int  # rows whose class gives some value a share ≥ CONFIDENT
    skewed_rows: int  # rows whose class's top value has lift ≥ 2 and share ≥ 0.5
    rows: int
    worst: tuple[ClassDisclosure, ...] = field(repr=False)

    def to_dict(self) -> dict[str, float | int]:
        share = (lambda n: n / self.rows) if self.rows else (lambda n: 0.0)
        return {
            "homogeneous_classes": self.homogeneous_classes,
            "homogeneous_rows": self.homogeneous_rows,
            "homogeneous_share": share(self.homogeneous_rows),
            "confident_rows": self.confident_rows,
            "confident_share": share(self.confident_rows),
            "skewed_rows": self.skewed_rows,
            "skewed_share": share(self.skewed_rows),
        }


def _top_values(values: ClassValues) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class: its most common value, that value's count, the number of distinct values."""
    classes = len(values.class_sizes)
    order = np.lexsort((-values.pair_count, values.pair_class))
    starts = np.searchsorted(values.pair_class[order], np.arange(classes))
    top = order[starts]
    distinct = np.bincount(values.pair_class, minlength=classes)
    return values.pair_value[top], values.pair_count[top], distinct


def attacks(data: RiskInput, classes: Classes, values: ClassValues, *, show: int = 20) -> Attacks:
    """The attacks' reach, and the `show` classes that disclose most (highest posterior, then
    highest lift, then largest)."""
    top_value, top_count, distinct = _top_values(values)
    sizes = values.class_sizes
    posterior = top_count / sizes
    prior = values.overall[top_value]
    lift = posterior / np.maximum(prior, 1e-300)
    homogeneous = distinct == 1
    ranking = np.lexsort((-sizes, -lift, -posterior))[:show]
    qi_labels = labels_of_class(data, classes, ranking)
    labels = data.sensitive.labels
    worst = tuple(
        ClassDisclosure(
            qi=qi_labels[i],
            size=int(sizes[c]),
            value=labels[int(top_value[c])],
            posterior=float(posterior[c]),
            prior=float(prior[c]),
            lift=float(lift[c]),
        )
        for i, c in enumerate(ranking)
    )
    return Attacks(
        homogeneous_classes=int(homogeneous.sum()),
        homogeneous_rows=int(sizes[homogeneous].sum()),
        confident_rows=int(sizes[posterior >= CONFIDENT].sum()),
        skewed_rows=int(sizes[(lift >= 2) & (posterior >= 0.5)].sum()),
        rows=int(sizes.sum()),
        worst=worst,
    )


def attacker_view(
    data: RiskInput, known: dict[str, str]
) -> tuple[int, dict[str, tuple[float, float]]]:
    """What an attacker who knows a person's QI values `known` learns: the size of the class,
    and per sensitive value (share in the class, share in the whole table). Size 0: no such
    class (the person is not in the table, or the values are wrong)."""
    mask = np.ones(data.rows, bool)
    for column in data.qi:
        label = known.get(column.name)
        if label not in column.labels:
            return 0, {}
        mask &= column.codes == column.labels.index(label)
    codes = data.sensitive.codes
    size = int(mask.sum())
    if size == 0:
        return 0, {}
    inside = np.bincount(codes[mask], minlength=len(data.sensitive.labels)) / size
    overall = np.bincount(codes, minlength=len(data.sensitive.labels)) / data.rows
    return size, {
        label: (float(inside[i]), float(overall[i]))
        for i, label in enumerate(data.sensitive.labels)
        if inside[i] > 0 or overall[i] > 0
    }
