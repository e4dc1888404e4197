"""The size of a plan, counted from its raw mapping before any domain is expanded.

A domain written as ``{range: [0, 999999]}`` or bins written as ``{start, stop, width}`` are
a few bytes that stand for a million values; 30 such columns in one table stand for 10^180
cells. `check_plan_size` counts both arithmetically, so that a plan over the limit is refused
in microseconds instead of seconds and gigabytes. Anything malformed counts as 0 here: the
parser reports it afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import PlanError
from dprelease.plan.values_text import is_number

_CAP = 10**18  # counts stop growing here: enough to compare with any limit, cheap to print


def column_size(raw: object) -> int:
    """Values of a column's domain (categorical) or bins (numeric) as the plan writes them.

    - ``domain: [a, b, c]`` → 3; ``domain: {range: [lo, hi]}`` → hi − lo + 1;
    - ``bins: [e0, ..., ek]`` → k; ``bins: {start, stop, width}`` → ⌈(stop − start) / width⌉.
    """
    if not isinstance(raw, Mapping):
        return 0
    kind = raw.get("kind", "categorical" if "domain" in raw else "numeric")
    if kind == "categorical":
        domain = raw.get("domain")
        if isinstance(domain, list):
            return len(domain)
        bounds = domain.get("range") if isinstance(domain, Mapping) else None
        if isinstance(bounds, list) and len(bounds) == 2 and all(_whole(b) for b in bounds):
            return max(0, min(int(bounds[1]) - int(bounds[0]) + 1, _CAP))
        return 0
    bins = raw.get("bins")
    if isinstance(bins, list):
        return max(0, len(bins) - 1)
    if isinstance(bins, Mapping):
        start, stop, width = (bins.get(key) for key in ("start", "stop", "width"))
        if _finite(start) and _finite(stop) and _finite(width) and width > 0:
            if stop - start >= _CAP * width:  # compared, not divided: 1e300 / 1e-300 is inf
                return _CAP
            return math.ceil(max(0, stop - start) / width)
    return 0


def _finite(value: object) -> TypeGuard[float]:
    return is_number(value) and math.isfinite(value)  # type: ignore[arg-type]


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _by(raw: object) -> list[str]:
    """A raw table's `by` column names (text; whole numbers as their text; others skipped)."""
    by = raw.get("by", []) if isinstance(raw, Mapping) else []
    by = [by] if isinstance(by, str) else by
    names = by if isinstance(by, list) else []
    return [str(n) for n in names if isinstance(n, str | int) and not isinstance(n, bool)]


def _table_cells(raw: object, sizes: Mapping[str, int]) -> int:
    """Π of the sizes of a table's `by` columns (the grand total: 1 cell)."""
    cells = 1
    for name in _by(raw):
        cells = min(cells * sizes.get(name, 1), _CAP)
    return cells


def _column_sizes(top: Mapping[str, Any]) -> dict[str, int]:
    columns = top.get("columns")
    raw_columns = columns if isinstance(columns, Mapping) else {}
    return {str(name): column_size(raw) for name, raw in raw_columns.items()}


def table_cells(top: Mapping[str, Any]) -> list[int | None]:
    """Cells of each table of a (draft) plan mapping, counted without expanding anything;
    None for a table that uses a column the plan does not declare."""
    sizes = _column_sizes(top)
    tables = top.get("tables")
    return [
        _table_cells(raw, sizes) if all(name in sizes for name in _by(raw)) else None
        for raw in (tables if isinstance(tables, list) else [])
    ]


def _count(number: int) -> str:
    return f"{number:,}" if number < _CAP else f"more than {_CAP:,}"


def check_plan_size(top: Mapping[str, Any], max_cells: int) -> None:
    """Refuse a plan whose tables have more than `max_cells` cells in all, or whose columns
    declare more than `max_cells` domain values in all, before anything is expanded."""
    sizes = _column_sizes(top)
    how = "the limit is set with --max-cells"
    values = min(sum(sizes.values()), _CAP)
    if values > max_cells:
        raise PlanError(
            f"The plan's columns declare {_count(values)} domain values in all; at most "
            f"{max_cells:,} are allowed ({how})."
        )
    tables = top.get("tables")
    cells = 0
    for raw in tables if isinstance(tables, list) else []:
        cells = min(cells + _table_cells(raw, sizes), _CAP)
    if cells > max_cells:
        raise PlanError(
            f"The plan's tables have {_count(cells)} cells in all; at most {max_cells:,} are "
            f"allowed ({how}): drop tables or columns, or use coarser domains."
        )


def plan_estimate(plan: Any, data: DataSize) -> Estimate:
    """Admission's estimate of the parsed plan itself (issue 35): its tables' cells, within
    MAX_CELLS (refused at parse, `check_plan_size`); each cell is a few values in memory."""
    cells = sum(spec.cells(plan.schema) for spec in (*plan.tables, *plan.invariants))
    return Estimate("plan", cells * 200, cells * 8 * 4, "MAX_CELLS", f"{cells:,} cells")


register("plan", plan_estimate)
