"""Dashboard edit for issue 37.8: set or clear a table's survey weight.

Like `dprelease.plan.edit`, it takes the plan mapping and returns a changed copy; the value is
checked by the plan's own parser (`dprelease.plan.survey_weight`) before it is kept.
"""

from __future__ import annotations

import copy

from dprelease.errors import PlanError, quote
from dprelease.plan.edit import PlanDict
from dprelease.plan.survey_weight import parse_survey_weight


def weight_text(raw: object) -> str:
    """A table's `survey_weight` as the Tables page's grid shows it ("" for counts)."""
    if not isinstance(raw, dict):
        return ""
    bounds = raw.get("bounds")
    if isinstance(bounds, list) and len(bounds) == 2:
        return f"{raw.get('column')} in [{bounds[0]}, {bounds[1]}]"
    return str(raw.get("column", ""))


def set_survey_weight(
    plan: PlanDict, table: str, column: str | None, bound: float | None = None
) -> PlanDict:
    """The plan with table `table` weighted by `column` (weights clamped into [0, bound]),
    or a count table again when `column` is None."""
    new = copy.deepcopy(plan)
    found = next((t for t in new.get("tables", []) if t.get("name") == table), None)
    if found is None:
        raise PlanError(f"The plan has no table {quote(table)}.")
    if column is None:
        found.pop("survey_weight", None)
        return new
    if "stat" in found or found.get("invariant"):
        raise PlanError(
            f"Table {quote(table)} is a statistic or invariant; only a table of counts can be "
            "weighted."
        )
    whole = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
    raw = {"column": column, "bounds": [0, whole]}
    parse_survey_weight(raw, f"table {quote(table)}")  # refuses a bad bound in its own words
    found["survey_weight"] = raw
    return new
