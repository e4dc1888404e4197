"""The synthetic microdata in a release (issue 27): `microdata.csv`, its metadata and report.

`microdata.csv` has one row per synthetic person and one column per plan column a table uses
(with the hierarchy's ancestors), holding the same codes as the tables (a binned column its
bin `[a, b)`), each followed by `C_label` where the plan labels the column, as the tables'
CSVs are (issue 37: a join of microdata with a table works on the codes). The published
tables are its tabulations. Each distinct text is
made spreadsheet-safe and quoted once, then the rows are joined: a million rows in about a
second.
"""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np

from dprelease.plan.model import Plan
from dprelease.release.csv_cells import csv_bytes, csv_cell, csv_safe
from dprelease.stats.synthesis import SynthesisBudget
from dprelease.synthetic.microdata import Microdata, value_texts

FILE = "microdata.csv"
CHUNK = 200_000  # rows joined at a time (bounds the temporary strings)

MODEL_NOTE = (
    "Synthetic records from a graphical model fitted to the noisy measurements only (no "
    "privacy cost). The published tables are tabulations of these records, so their cells are "
    "model estimates, not unbiased counts; each table's simulated error (standard error and "
    "bias, from the measurements only) is in its entry."
)


def microdata_csv(plan: Plan, microdata: Microdata) -> bytes:
    """The records as UTF-8 CSV: a header of column names, then one line per person."""
    names: list[str] = []
    texts: list[np.ndarray] = []  # per output column: the text of each code
    sources: list[int] = []  # per output column: the microdata column it reads
    for at, name in enumerate(microdata.columns):
        for title, values in value_texts(plan.schema, name):
            names.append(title)
            texts.append(np.asarray([csv_cell(csv_safe(t)) for t in values], dtype=object))
            sources.append(at)
    header = csv_bytes([[csv_safe(name) for name in names]])
    parts = [header]
    for start in range(0, microdata.rows, CHUNK):
        block = microdata.codes[start : start + CHUNK]
        columns = [texts[i][block[:, sources[i]]] for i in range(len(texts))]
        if not columns:  # a plan of grand totals only: rows with no column
            parts.append(b'""\n' * block.shape[0])
            continue
        lines = [",".join(row) for row in zip(*columns, strict=True)]
        parts.append(("\n".join(lines) + "\n").encode("utf-8"))
    return b"".join(parts)


SHARE_NOTE = (
    "With its own budget share (issue 38.6) the synthesis also measured the 1-way marginal of "
    "every declared column no table holds and the 2-way marginals it chose privately, one a "
    "round, where its model was furthest from the data: pairs that join the tables' groups of "
    "columns, and pairs the tables link only through other columns (the allocation's "
    "`synthesis` entry gives their noise); "
    "that cost is part of the release's total."
)


def microdata_metadata(microdata: Microdata) -> dict[str, Any]:
    """The release metadata's `synthetic` entry; with a synthesis share, the columns it
    measured and the pairs it chose (names only)."""
    share = {}
    if microdata.measured_columns or microdata.extra_pairs:
        share = {
            "measured_columns": list(microdata.measured_columns),
            "extra_pairs": [list(pair) for pair in microdata.extra_pairs],
            "share_note": SHARE_NOTE,
        }
    return {
        "file": FILE,
        "rows": microdata.rows,
        "columns": list(microdata.columns),
        "model": "junction tree over the published tables"
        + ("" if microdata.exact else " (a cycle of tables, fitted by IPF)"),
        "cliques": [list(key) for key in microdata.cliques],
        "exact": not microdata.mismatches,
        "unmatched": [m.to_dict() for m in microdata.mismatches],
        "note": MODEL_NOTE,
        **share,
    }


def _share_report(synthesis: SynthesisBudget | None, microdata: Microdata) -> str:
    """The report's paragraph on the synthesis share (issue 38.6), empty without one."""
    if synthesis is None:
        return ""
    share = synthesis.share
    noise = [
        f"{what}: {n.mechanism.replace('_', ' ')}, noise std {n.std:,.1f}"
        for what, n in (("1-way marginals", synthesis.one_way), ("chosen pairs", synthesis.pair))
        if n is not None
    ]
    if synthesis.selection_epsilon is not None:
        noise.append(
            f"each choice: exponential mechanism at ε = {float(synthesis.selection_epsilon):.4g}"
        )
    pairs = "; ".join(" × ".join(p) for p in microdata.extra_pairs) or "none"
    columns = ", ".join(microdata.measured_columns) or "none"
    return f"""<p>The synthesis had its own share of the budget:
{share.accountant.symbol} = {share.amount:.6g} ({escape(share.accounting)} accounting), spent
on the 1-way marginals of the columns no table holds ({escape(columns)}) and on 2-way
marginals chosen privately, one a round, where the model was furthest from the data (to join
the tables' groups of columns, or to link columns the tables join only through others:
{escape(pairs)}).
{escape("; ".join(noise))}.</p>"""


def microdata_report(microdata: Microdata | None, synthesis: SynthesisBudget | None = None) -> str:
    """The report's section on the synthetic microdata (empty without them)."""
    if microdata is None:
        return ""
    if microdata.mismatches:
        rows = "\n".join(
            f"<tr><td>{escape(m.table)}</td><td>{m.cells}</td><td>{m.largest}</td>"
            f"<td>{m.total}</td></tr>"
            for m in microdata.mismatches
        )
        matched = f"""<p>The tables form a cycle, so the model joins them into larger cliques
fitted by iterative proportional fitting; after rounding to whole persons, these tables differ
from their consistent estimates (the published tables are the records' tabulations):</p>
<table><thead><tr><th>table</th><th>cells changed</th><th>largest change</th>
<th>total change</th></tr></thead><tbody>
{rows}
</tbody></table>"""
    else:
        matched = (
            "<p>Every published table is matched exactly by the records: the tables "
            "form no cycle, so their consistent estimates are the model's own marginals.</p>"
        )
    return f"""<h2>Synthetic microdata</h2>
<p><code>{FILE}</code> holds {microdata.rows:,} synthetic persons with the columns
{escape(", ".join(microdata.columns))}. {escape(MODEL_NOTE)} The records join the model's
cliques ({escape("; ".join(" × ".join(k) or "(total)" for k in microdata.cliques))}) person by
person; within what the tables say, the columns of different cliques are independent.</p>
{_share_report(synthesis, microdata)}
{matched}"""
