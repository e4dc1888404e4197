"""The report's public definitions: every released column's domain (codes with their
codebook labels, the `other` code, the parent of each code) and its bins.

All of it comes from the plan, never from the data; every text is HTML-escaped (codes, labels
and names are the user's own strings).
"""

from __future__ import annotations

from html import escape

from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn, Column, NumericColumn

FOLDED_AFTER = 30  # longer domains (3,143 counties) are folded into a <details> element


def _fold(count: int, noun: str, table: str) -> str:
    if count <= FOLDED_AFTER:
        return table
    return f"<details><summary>{count:,} {noun}</summary>\n{table}\n</details>"


def _categorical(column: CategoricalColumn) -> str:
    parents = column.parent_map or {}
    head = "<th>code</th><th>label</th>" + (
        f"<th>{escape(column.parent or '')}</th>" if column.parent else ""
    )
    rows = []
    for code in column.labels:
        parent = f"<td>{escape(parents.get(code, ''))}</td>" if column.parent else ""
        rows.append(
            f"<tr><td>{escape(code)}</td><td>{escape(column.label_of(code))}</td>{parent}</tr>"
        )
    table = (
        f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>"
    )
    notes = []
    if column.other is not None:
        other = column.labels[column.other_code]
        notes.append(f"values outside the domain are counted as {escape(other)}")
    else:
        notes.append("rows with a value outside the domain are left out of its tables")
    if column.parent:
        notes.append(f"each code lies within one code of {escape(column.parent)}")
    return f"<p>Categorical, {column.size:,} codes; {'; '.join(notes)}.</p>\n" + _fold(
        column.size, "codes", table
    )


def _numeric(column: NumericColumn) -> str:
    rows = [f"<tr><td>{escape(label)}</td></tr>" for label in column.labels]
    table = "<table><thead><tr><th>bin</th></tr></thead><tbody>\n" + "\n".join(rows)
    return (
        f"<p>Numeric, {column.size:,} bins: each is [a, b), the last [a, b]; values below the "
        "first or above the last edge are counted in the first or last bin.</p>\n"
        + _fold(column.size, "bins", table + "\n</tbody></table>")
    )


def _column(column: Column) -> str:
    source = (
        "<p><strong>The domain was read from the data</strong> (it reveals which values "
        "occur).</p>\n"
        if column.domain_source == "data"
        else ""
    )
    body = _categorical(column) if isinstance(column, CategoricalColumn) else _numeric(column)
    return f"<h3>{escape(column.name)}</h3>\n{source}{body}"


def domains_html(plan: Plan) -> str:
    """The report section that defines every released column: its public domain or bins."""
    used = set(plan.grouping_columns)  # a statistic's by-columns too
    columns = [_column(c) for c in plan.schema.columns if c.name in used]
    if not columns:
        return ""
    return (
        "<h2>Columns: the public definitions</h2>\n<p>The cells of every table are all the "
        "combinations of these codes and bins, in this order, whether or not anyone has them. "
        "Labels come from the plan's codebook; the CSV files carry them in a column "
        "<code>&lt;column&gt;_label</code>.</p>\n" + "\n".join(columns)
    )
