"""Turn the Tables page's edited grid back into plan edits."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.plan.edit import PlanDict, remove_table, update_table


def _number(value: Any) -> float | None:
    """A grid cell as a number; empty cells (None or NaN) are None."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def stat_text(stat: object) -> str:
    """The grid's `statistic` cell: kind, column and bounds ("count" for a count table)."""
    if not isinstance(stat, dict):
        return "count"
    if isinstance(stat.get("regression"), dict) or "pca" in stat:  # issue 28.4
        return model_text(stat)
    kind = next((k for k in ("quantile", "sum", "mean") if k in stat), "?")
    column = stat.get("column") if kind == "quantile" else stat.get(kind)
    what = f"quantile {stat[kind]}" if kind == "quantile" else kind
    return f"{what} of {column} in {stat.get('bounds')} (clamped)"


def model_text(stat: dict[str, Any]) -> str:
    """A regression's or PCA's grid cell, from the draft plan (not yet checked)."""
    if "pca" in stat:
        columns = stat["pca"] if isinstance(stat["pca"], list) else [stat["pca"]]
        return f"top {stat.get('k', 1)} principal components of {', '.join(map(str, columns))}"
    body = stat["regression"]
    xs = body.get("x") if isinstance(body.get("x"), list) else [body.get("x")]
    family = body.get("family", "linear")
    return f"{family} regression of {body.get('y')} on {', '.join(map(str, xs))}"


def apply_table_edits(plan: PlanDict, rows: Sequence[dict[str, Any]], lock_unit: str) -> PlanDict:
    """Apply each edited row (same order as the plan's tables) to the plan."""
    originals = [t.get("name") for t in plan.get("tables", [])]
    if len(rows) != len(originals):
        raise PlanError("Tables cannot be added in the grid; use Add table above.")
    out = plan
    for original, row in zip(originals, rows, strict=True):
        if row.get("remove"):
            out = remove_table(out, original)
            continue
        target_cell = _number(row.get("target MoE per cell"))
        target_table = _number(row.get("target MoE whole table"))
        if target_cell is not None and target_table is not None:
            raise PlanError(f"Table {quote(original)}: give one accuracy target, not both.")
        target = (
            {"moe": target_cell}
            if target_cell is not None
            else {"moe_table": target_table}
            if target_table is not None
            else None
        )
        weight = _number(row.get("weight"))
        new_name = str(row.get("name") or "").strip() or original
        changes: dict[str, Any] = {
            lock_unit: _number(row.get(f"locked {lock_unit}")),
            "weight": None if weight in (None, 1.0) else weight,
            "target": target,
            # issue 27: exact counts, never a default; ticked only by the user
            "invariant": True if row.get("invariant (exact, no noise)") else None,
        }
        if new_name != original:
            changes["name"] = new_name
        out = update_table(out, original, **changes)
    return out
