"""CONFIDENTIAL: how the data's values fall against the declared domains, column by column.

The Data page shows it to the data holder while they declare domains, before any table
exists, so it encodes every declared column through a one-way table of its own.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from dprelease.data.count import encode
from dprelease.data.report import ColumnReport
from dprelease.plan.parse import parse_plan

_COVERAGE_BUDGET = {"accounting": "pure", "epsilon": 1.0}  # never spent: encoding only


def domain_coverage(table: pa.Table, plan: dict[str, Any]) -> dict[str, ColumnReport]:
    """Per declared column present in the data: rows in the domain, sent to `other`, left
    out or clamped. Raises PlanError if the columns' declarations are not valid yet."""
    columns = plan.get("columns", {})
    present = [name for name in columns if name in table.column_names]
    if not present:
        return {}
    probe = parse_plan(
        {
            "version": 1,
            "columns": columns,
            "tables": [{"name": f"c{i}", "by": [name]} for i, name in enumerate(present)],
            "budget": _COVERAGE_BUDGET,
        }
    )
    report = encode(table, probe).report
    return {column.name: column for column in report.columns}
