"""CONFIDENTIAL: how the data's values fall against the declared domains, column by column.

The Data page shows it to the data holder while they declare domains, before any table
exists, so it encodes every declared column present in the data on its own (no unit cap).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from dprelease.data.count import encode_columns
from dprelease.data.report import ColumnReport
from dprelease.plan.parse import parse_schema


def domain_coverage(table: pa.Table, plan: dict[str, Any]) -> dict[str, ColumnReport]:
    """Per declared column present in the data: rows in the domain, sent to `other`, left
    out or clamped. Raises PlanError if the columns' declarations are not valid yet."""
    columns = plan.get("columns", {})
    present = [name for name in columns if name in table.column_names]
    if not present:
        return {}
    _, reports = encode_columns(table, parse_schema(columns), present)
    return {report.name: report for report in reports}
