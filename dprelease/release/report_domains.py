"""The report's public definitions: every released column's domain (codes with their
codebook labels, the `other` code, the parent of each code) and its bins (with their labels);
and `with_labels`, the one maker of the released files' `C_label` columns.

All of it comes from the plan, never from the data; every text is HTML-escaped (codes, labels
and names are the user's own strings).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from html import escape

from dprelease.plan.model import Plan
from dprelease.plan.schema import LABEL_SUFFIX, CategoricalColumn, Column, NumericColumn, Schema

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
    labelled = column.bin_labels is not None
    rows = [
        f"<tr><td>{escape(code)}</td>"
        + (f"<td>{escape(column.label_of(code))}</td>" if labelled else "")
        + "</tr>"
        for code in column.labels
    ]
    head = "<th>bin</th>" + ("<th>label</th>" if labelled else "")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows)
    return (
        f"<p>Numeric, {column.size:,} bins: each is [a, b), the last [a, b]; values below the "
        "first or above the last edge are counted in the first or last bin.</p>\n"
        + _fold(column.size, "bins", table + "\n</tbody></table>")
    )


_SOURCE_NOTES = {
    "data": "<p><strong>The domain was read from the data</strong> (it reveals which values "
    "occur).</p>\n",
    "value_labels": "<p>The domain and labels are the value labels the data file declares "
    "(the producer's codebook), not values found in the records.</p>\n",
}


def _column(column: Column) -> str:
    source = _SOURCE_NOTES.get(column.domain_source, "")
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


def with_labels(
    header: Sequence[str], rows: Iterable[Sequence[str]], by: Sequence[str], schema: Schema
) -> tuple[list[str], Iterator[list[str]]]:
    """A released frame (its first len(by) columns are the codes of the `by` columns) with a
    column `C_label` after each code column C that the plan labels: the codebook's label of
    the cell's code ("" for a code without one), or a labelled bin's label. Every other column
    is kept as it is. The one place label columns are made: tables/, measurements/ and the
    statistics' CSVs call it.

    For tables/ and measurements/ alike; labels are public (they are part of the plan).
    """
    labelled = [(at, column) for at, name in enumerate(by) if (column := schema[name]).value_labels]
    if not labelled:
        return list(header), (list(row) for row in rows)
    at_label = {at: column for at, column in labelled}

    def spread(row: Sequence[str], label_of: Callable[[int, str], str]) -> list[str]:
        out: list[str] = []
        for at, cell in enumerate(row):
            out.append(cell)
            if at in at_label:
                out.append(label_of(at, cell))
        return out

    new_header = spread(header, lambda _, name: name + LABEL_SUFFIX)
    return new_header, (spread(row, lambda at, code: at_label[at].label_of(code)) for row in rows)
