"""Dashboard edits of a draft plan's Census-style constraints (issue 27): add or remove a
structural zero. Each edit returns a new mapping and leaves the draft as it was on error."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from dprelease.errors import PlanError, quote
from dprelease.plan.edit import PlanDict
from dprelease.plan.parse import parse_schema
from dprelease.plan.zeros import parse_structural_zeros, zero_mask, zero_problems


def add_structural_zero(plan: PlanDict, values: Mapping[str, Sequence[str]]) -> PlanDict:
    """Add `{column: [values], ...}`: the cells matching every listed column are impossible.

    Refused (PlanError, one line) when a column or value is unknown, when a column has no
    value picked, or when the zero would make every cell of one of the draft's tables 0."""
    picked = {str(column): list(chosen) for column, chosen in values.items()}
    if not picked:
        raise PlanError("Pick at least one column for the structural zero.")
    empty = [column for column, chosen in picked.items() if not chosen]
    if empty:
        raise PlanError(f"Pick at least one value of column {quote(empty[0])}.")
    existing = plan.get("structural_zeros") or []
    zeros = parse_structural_zeros([*existing, picked])
    schema = parse_schema(plan.get("columns", {}))
    problems = zero_problems(schema, zeros)
    if problems:
        raise PlanError(problems[0])
    for table in plan.get("tables", []):
        by = [str(c) for c in table.get("by", [])]
        if "stat" in table or not all(c in schema for c in by):
            continue
        if zero_mask(schema, zeros, by).all():
            raise PlanError(
                f"That zero would make every cell of table {quote(table.get('name', ''))} 0; "
                "a structural zero must leave some cells possible."
            )
    out = copy.deepcopy(plan)
    out["structural_zeros"] = [*copy.deepcopy(existing), picked]
    return out


def remove_structural_zero(plan: PlanDict, index: int) -> PlanDict:
    """Remove the plan's `index`-th structural zero (the key goes when none is left)."""
    zeros = list(plan.get("structural_zeros") or [])
    if not 0 <= index < len(zeros):
        raise PlanError(f"The plan has no structural zero number {index + 1}.")
    out = copy.deepcopy(plan)
    del zeros[index]
    if zeros:
        out["structural_zeros"] = copy.deepcopy(zeros)
    else:
        out.pop("structural_zeros", None)
    return out
