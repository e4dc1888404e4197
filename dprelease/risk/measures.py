"""CONFIDENTIAL: every disclosure-risk measure of one choice of quasi-identifiers and
sensitive attribute, in one call (`measure_risk`), as the CLI's JSON and the Risk page show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dprelease.risk.attacks import Attacks, attacks
from dprelease.risk.classes import (
    Classes,
    KAnonymity,
    RiskInput,
    class_values,
    equivalence_classes,
    k_anonymity,
)
from dprelease.risk.closeness import TCloseness, t_closeness
from dprelease.risk.diversity import LDiversity, l_diversity

CONFIDENTIAL_LINE = (
    "CONFIDENTIAL — disclosure risk of your own data, for you only: never publish it, "
    "it is not part of any release."
)


@dataclass(frozen=True)
class RiskReport:
    """CONFIDENTIAL: k-anonymity, l-diversity, t-closeness and the attacks, for one QI set."""

    qi: tuple[str, ...]
    sensitive: str
    classes: Classes
    k: KAnonymity
    l: LDiversity  # noqa: E741
    t: TCloseness
    attacks: Attacks

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON: rows, classes, k, unique, below_k, l_distinct, l_entropy,
        recursive_cl (for the chosen c and l), t_closeness, t_ground_distance, and more."""
        return {
            "confidential": True,
            "qi": list(self.qi),
            "sensitive": self.sensitive,
            **self.k.to_dict(),
            **self.l.to_dict(),
            **self.t.to_dict(),
            **self.attacks.to_dict(),
        }


DEFAULT_L = 2  # recursive (c, 2)-diversity: no class dominated by its most common value


def measure_risk(
    data: RiskInput,
    *,
    k: int = 5,
    c: float = 2.0,
    l: int = DEFAULT_L,  # noqa: E741
    show: int = 20,
) -> RiskReport:
    """All measures; recursive (c, l)-diversity with the l asked for, apart from k (a
    sensitive attribute with fewer than l values can never be (c, l)-diverse)."""
    classes = equivalence_classes([column.codes for column in data.qi])
    values = class_values(classes, data.sensitive)
    return RiskReport(
        qi=tuple(column.name for column in data.qi),
        sensitive=data.sensitive.name,
        classes=classes,
        k=k_anonymity(classes, k),
        l=l_diversity(values, c=c, l=l),
        t=t_closeness(values, ordered=data.sensitive.ordered),
        attacks=attacks(data, classes, values, show=show),
    )
