"""Every statistic the plan can ask for, one object per kind and method (issue 26).

The budget (`entry`, `allocation`), the release (`dprelease.release.statistics`), its files
and its report ask `kind_of(spec)` and never import a statistic's module: this is the only
module that does (a test reads every import). Adding a statistic: its spec and parser in
`dprelease.plan.stat_spec` (with its methods in `METHODS`), its module here with its
`StatisticKind` object, and one line below.
"""

from __future__ import annotations

from typing import Any

from dprelease.errors import InternalError, quote
from dprelease.plan.stat_kinds import AUTO, METHODS, SUMMARY_KINDS, candidate_methods
from dprelease.plan.stat_spec import StatSpec
from dprelease.stats.aggregate_mean import AGGREGATE_MEAN
from dprelease.stats.auto_method import AutoKind
from dprelease.stats.discovery import DISCOVERY, DiscoveredDomain, DiscoveryMechanism
from dprelease.stats.kind import StatisticKind
from dprelease.stats.means import MEAN
from dprelease.stats.models import LINEAR, LOGISTIC, PCA
from dprelease.stats.quantile import QUANTILE
from dprelease.stats.smooth_quantile import SMOOTH_QUANTILE
from dprelease.stats.sums import SUM

_METHODS: tuple[StatisticKind[Any], ...] = (
    QUANTILE, SMOOTH_QUANTILE, SUM, MEAN, AGGREGATE_MEAN, LINEAR, LOGISTIC, PCA,
)  # fmt: skip
_AUTO = tuple(  # issue 38.3: `method: auto` chooses among a kind's other methods
    AutoKind(*(k for k in _METHODS if k.kind == kind and k.method in candidate_methods(kind)))
    for kind in SUMMARY_KINDS
    if AUTO in METHODS[kind]
)
STATISTICS: dict[tuple[str, str], StatisticKind[Any]] = {
    (kind.kind, kind.method): kind for kind in (*_METHODS, *_AUTO)
}
"""(kind, method) → the statistic's object; the plan's `METHODS` name exactly these."""

__all__ = [
    "DISCOVERY",
    "STATISTICS",
    "DiscoveredDomain",
    "DiscoveryMechanism",
    "kind_of",
    "kind_of_entry",
]

if set(STATISTICS) != {(kind, method) for kind, methods in METHODS.items() for method in methods}:
    raise InternalError("the statistics registry and the plan's METHODS disagree")


def kind_of(spec: StatSpec) -> StatisticKind[Any]:
    """The object of a statistic's kind and method."""
    found = STATISTICS.get((spec.kind, spec.method))
    if found is None:
        raise InternalError(f"no statistic {quote(spec.kind)} by {quote(spec.method)}")
    return found


def kind_of_entry(entry: dict[str, Any]) -> StatisticKind[Any]:
    """The object of a statistic's `plan --json` / metadata entry (its kind and `stat`)."""
    stat = entry["stat"]
    family = stat["regression"].get("family") if "regression" in stat else None  # issue 28.4
    # `method` (issue 38.3): the method that drew, `auto`'s choice included
    method = entry.get("method") or stat.get("method") or family or METHODS[entry["kind"]][0]
    found = STATISTICS.get((entry["kind"], method))
    if found is None:
        raise InternalError(f"no statistic {quote(entry['kind'])} by {quote(method)}")
    return found
