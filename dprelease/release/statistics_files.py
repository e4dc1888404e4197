"""Release files of statistics and discovered domains (issue 16): CSV, metadata, report.

`tables/<name>.csv` of a statistic has its by-columns (each labelled code followed by its
`C_label`, as in a count table), then `value` (in place of `count`) and its `moe` (the margin
at the plan's confidence, from the method's own bound; empty where the method bounds only a
rank, e.g. a quantile by the exponential mechanism: metadata.json's `error` says so); a table
of several quantiles has a `quantile` column before `value`, one row per cell and quantile.
Only noisy values and data-free margins are written: no true value, count or row count. The
metadata and the report state which rows each statistic uses (`rows_used`), never how many it
left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from dprelease.plan.model import Plan
from dprelease.release.csv_cells import csv_bytes
from dprelease.release.report_domains import with_labels
from dprelease.release.statistics import ReleasedStatistic
from dprelease.stats.registry import DiscoveredDomain, kind_of_entry


def statistic_csv(
    plan: Plan,
    released: ReleasedStatistic,
    safe: Callable[[str], str],
    number: Callable[[Any], str],
) -> bytes:
    statistic = released.budget.statistic
    out: list[list[str]] = []
    budget = released.budget
    own = budget.kind.table(budget.mechanism, released.values, budget.confidence)
    if own is not None:  # a regression's or PCA's own table (issue 28.4)
        header, table_rows = own
        out.append([safe(column) for column in header])
        out.extend(
            [safe(c) if isinstance(c, str) else "" if c is None else number(c) for c in row]
            for row in table_rows
        )
        return csv_bytes(out)
    spec = statistic.table
    labels = released.budget.kind.csv_labels(statistic.stat)  # several values per cell
    several = labels is not None
    header = [*spec.by, *(["quantile"] if several else []), "value", "moe"]
    shape = (released.values.shape[0], -1)
    values = released.values.reshape(shape).tolist()
    moes = (
        released.moe.reshape(shape).tolist()
        if released.moe is not None
        else [[None] * len(row) for row in values]
    )
    cells = list(spec.cell_labels(plan.schema)) if spec.by else [()]
    rows: list[list[str]] = []
    for cell, row, margins in zip(cells, values, moes, strict=True):
        if labels is not None:
            triples = zip(labels, row, margins, strict=True)
            rows.extend([*cell, label, number(v), _margin(m, number)] for label, v, m in triples)
        else:
            rows.append([*cell, number(row[0]), _margin(margins[0], number)])
    header, labelled = with_labels(header, rows, spec.by, plan.schema)
    text = len(header) - (3 if several else 2)  # the codes and their labels
    out.append([safe(column) for column in header])
    out.extend([*map(safe, row[:text]), *row[text:]] for row in labelled)
    return csv_bytes(out)


def _margin(value: float | None, number: Callable[[Any], str]) -> str:
    """A `moe` cell: empty where the method gives no margin in value (or none is finite)."""
    return "" if value is None or not math.isfinite(value) else number(value)


def statistics_metadata(
    meta: dict[str, Any], plan: Plan, discovered: Mapping[str, DiscoveredDomain]
) -> None:
    """Metadata of the statistics (their files) and discovered columns, added to `meta`."""
    names = {s.name for s in plan.statistics}
    for entry in meta["tables"]:
        if entry["name"] in names:
            entry.pop("measurement_file", None)  # a statistic has no separate measurements
    for name, domain in discovered.items():
        entry = meta["columns"].setdefault(name, {"kind": "categorical"})
        entry.update(
            labels=[str(v) for v in domain.values],
            domain_source=domain.domain_source,
            discovery={"min_count": domain.min_count, "threshold": domain.threshold},
        )


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def statistics_report(meta: Mapping[str, Any], confidence: str) -> str:
    """The report's section on statistics and discovered domains (every text escaped)."""
    names = [e for e in meta["tables"] if "stat" in e]
    rows = []
    for entry in names:
        rows.append(
            f"<tr><td>{escape(entry['name'])}</td><td>{escape(entry['description'])}</td>"
            f"<td>{escape(' × '.join(entry['by']) or '(total)')}</td>"
            f"<td>{escape(entry['rows_used'])}</td>"
            f"<td>{escape(kind_of_entry(entry).mechanism_text)}</td>"
            f"<td>{_fmt(entry['epsilon'])}</td><td>{_fmt(entry['delta'])}</td>"
            f"<td>{_fmt(entry['rho'])}</td>"
            f"<td>{escape(kind_of_entry(entry).error_text(entry['error'], confidence))}</td></tr>"
        )
    discoveries = [
        f"<li>{escape(column)}: the values whose noisy count reached {d['discovery']['threshold']}"
        f" (min_count {d['discovery']['min_count']}): {len(d['labels'])} values</li>"
        for column, d in meta["columns"].items()
        if d.get("domain_source") == "discovered"
    ]
    if not rows and not discoveries:
        return ""
    table = (
        "<table><thead><tr><th>statistic</th><th>what</th><th>by</th><th>rows used</th>"
        "<th>mechanism</th>"
        "<th>ε</th><th>δ</th><th>ρ</th><th>error</th></tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>"
        if rows
        else ""
    )
    found = (
        "<h3>Discovered domains</h3><p>Released by the stability-based histogram: each value "
        "present in the data gets its count plus discrete Laplace noise, and only values whose "
        "noisy count reaches the threshold are released, as the column's domain (charged to "
        "this release's budget, (ε, δ)-DP).</p><ul>" + "".join(discoveries) + "</ul>"
        if discoveries
        else ""
    )
    return f"""<h2>Statistics</h2>
<p>Each file <code>tables/&lt;name&gt;.csv</code> of a statistic has the by-columns (a
labelled code followed by its <code>&lt;column&gt;_label</code>), then <code>value</code> and
<code>moe</code>, its margin of error at the plan's confidence from the method's own bound
(empty where the method bounds a rank, not a value: see the column <em>error</em>).
A statistic uses the rows where its column is a number: a missing or non-numeric value
leaves the row out of that statistic (the column <em>rows used</em> states each rule).
Bounds clamp every value: values above the upper bound pull a statistic down, values below
the lower bound pull it up; the size of this bias depends on the data and is not in any
margin of error. Choose bounds that hold nearly all values.</p>
{table}
{found}"""
