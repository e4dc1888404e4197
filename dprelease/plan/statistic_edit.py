"""Dashboard edits of the draft plan for issue 16: add a statistic, discover a domain.

Like `dprelease.plan.edit`, each takes the plan mapping and returns a changed copy; the values
are checked by the parser of the plan (`dprelease.plan.stat_spec`) before they are kept.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from dprelease.errors import DPReleaseError, PlanError, quote
from dprelease.plan.edit import PlanDict, table_name
from dprelease.plan.stat_kinds import SUMMARY_KINDS, other_methods
from dprelease.plan.stat_spec import parse_discover, parse_stat
from dprelease.plan.stat_text import stat_label

KINDS = SUMMARY_KINDS
DEFAULT_METHOD = "default"  # the kind's own default method (the Tables page's first choice)
METHOD_CHOICES = (DEFAULT_METHOD, *other_methods())


def statistic_text(raw: object) -> str:
    """A table's `stat:` as the Tables page's grid shows it: its label (`stat_label`, e.g.
    'median of age in [0, 100]'), "count" for a count table."""
    if not isinstance(raw, dict):
        return "count"
    try:
        return stat_label(parse_stat(raw, "the table"))
    except DPReleaseError:
        return "a statistic the plan refuses (see the problem below)"


def parse_quantiles(text: str) -> float | list[float]:
    """'0.5' or '0.25, 0.5, 0.75' as the plan's `quantile:` value."""
    try:
        values = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        raise PlanError(
            f"Quantiles must be numbers between 0 and 1 separated by commas, got {quote(text)}."
        ) from None
    if not values:
        raise PlanError("Give at least one quantile, e.g. 0.5.")
    return values[0] if len(values) == 1 else values


def add_statistic(
    plan: PlanDict,
    by: Sequence[str],
    kind: str,
    column: str,
    bounds: tuple[float, float],
    *,
    quantiles: str = "0.5",
    name: str | None = None,
    method: str = DEFAULT_METHOD,
) -> PlanDict:
    """Add a table of statistics (`stat:`), checked before it is kept. `method` is the
    kind's (`stat_spec.METHODS`), or DEFAULT_METHOD for the kind's default (left unwritten)."""
    if kind not in KINDS:
        raise PlanError(f"A statistic is one of {', '.join(KINDS)}, got {quote(kind)}.")
    column = column.strip()
    lo, hi = (int(b) if float(b).is_integer() else float(b) for b in bounds)
    stat: dict[str, Any] = {kind: parse_quantiles(quantiles) if kind == "quantile" else column}
    if kind == "quantile":
        stat["column"] = column
    stat["bounds"] = [lo, hi]
    if method != DEFAULT_METHOD:
        stat["method"] = method
    out = copy.deepcopy(plan)
    out.setdefault("tables", [])
    taken = [t.get("name", "") for t in out["tables"]]
    name = name or f"{kind}_{column}" + (f"_by_{table_name(by)}" if by else "")
    if name in taken:
        raise PlanError(f"There is already a table called {quote(name)}; pick another name.")
    unknown = [c for c in by if c not in out.get("columns", {})]
    if unknown:
        raise PlanError(f"Columns {', '.join(unknown)} have no domain yet; declare them first.")
    parse_stat(stat, name)  # one-line error now, not later
    out["tables"].append({"name": name, "by": list(by), "stat": stat})
    return out


def set_discovered(plan: PlanDict, name: str, min_count: int) -> PlanDict:
    """Make `name` a categorical column whose domain the release discovers privately."""
    discover = {"min_count": min_count}
    parse_discover(discover, name)
    out = copy.deepcopy(plan)
    out.setdefault("columns", {})[name] = {"kind": "categorical", "domain": {"discover": discover}}
    return out


def discover_of(declaration: dict[str, Any] | None) -> int | None:
    """The min_count of a column declaration with a discovered domain, else None."""
    domain = (declaration or {}).get("domain")
    if isinstance(domain, dict) and isinstance(domain.get("discover"), dict):
        value = domain["discover"].get("min_count")
        return value if isinstance(value, int) else None
    return None


def set_quantile_resolution(plan: PlanDict, name: str, resolution: float) -> PlanDict:
    """Set the resolution (distance between candidate values) of quantile statistic `name`,
    checked by the plan's parser before it is kept (its older key `grid_step` is replaced)."""
    out = copy.deepcopy(plan)
    table = next((t for t in out.get("tables", []) if t.get("name") == name), None)
    stat = table.get("stat") if table is not None else None
    if not isinstance(stat, dict) or "quantile" not in stat:
        raise PlanError(f"There is no quantile statistic called {quote(name)}.")
    stat.pop("grid_step", None)
    stat["resolution"] = int(resolution) if float(resolution).is_integer() else resolution
    parse_stat(stat, name)  # one-line error now, not later
    return out
