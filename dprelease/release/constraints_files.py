"""What a release says of its structural zeros and invariant tables (issue 27).

Metadata entries, per-cell margins (0 on a structural zero) and the report's section, in the
words the Budget page uses too (`INVARIANT_NOTE`). Invariant tables are the one place a
release holds true counts, because the plan asked for exactly that (`invariant: true`); every
other table's counts stay noisy, and nothing else here reads the data.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np

from dprelease.plan.model import Plan
from dprelease.plan.table_spec import TableSpec
from dprelease.plan.zeros import zero_mask, zeros_to_list

if TYPE_CHECKING:
    from dprelease.release.draw import Release

INVARIANT_NOTE = (
    "Invariant tables publish their exact counts, without noise and outside the differential "
    "privacy guarantee, because the plan chose so (invariant: true); they take no budget, and "
    "every other table is made consistent with them."
)
ZEROS_NOTE = (
    "Structural zeros are cells impossible by definition: they are released as 0 with margin "
    "of error 0, and every other table is made consistent with them."
)


def zero_cells(plan: Plan, spec: TableSpec) -> np.ndarray:
    """For each cell of a table, whether a structural zero makes it 0."""
    return zero_mask(plan.schema, plan.structural_zeros, spec.by)


def invariant_entry(plan: Plan, spec: TableSpec) -> dict[str, Any]:
    """An invariant table's entry among `tables` (the fields of a noisy table, filled)."""
    return {
        "name": spec.name,
        "by": list(spec.by),
        "cells": spec.cells(plan.schema),
        "invariant": True,
        "mechanism": "none",
        "sensitivity": None,
        "epsilon": None,
        "delta": None,
        "rho": None,
        "noise_scale": 0.0,
        "noise_std": 0.0,
        "moe": 0.0,
        "moe_table": 0.0,
        "expected_rmse": 0.0,
        "measured_as": None,
        "note": INVARIANT_NOTE,
    }


def constraints_metadata(meta: dict[str, Any], release: Release) -> None:
    """Add the invariant tables and the structural zeros to a release's metadata."""
    plan = release.plan
    for entry in meta["tables"]:
        entry.setdefault("invariant", False)
        if plan.structural_zeros:
            spec = next((s for s in plan.tables if s.name == entry["name"]), None)
            if spec is not None:
                entry["structural_zero_cells"] = int(zero_cells(plan, spec).sum())
    for spec in plan.invariants:
        entry = invariant_entry(plan, spec)
        entry["file"] = f"tables/{spec.name}.csv"
        entry["measurement_file"] = None
        entry["released"] = {"standard_error": 0.0, "moe": 0.0, "bias": 0.0, "method": "exact"}
        meta["tables"].append(entry)
    meta["invariants"] = [spec.name for spec in plan.invariants]
    meta["structural_zeros"] = zeros_to_list(plan.structural_zeros)
    if plan.invariants:
        meta["guarantee_note"] = INVARIANT_NOTE


def cell_moes(plan: Plan, spec: TableSpec, moe: str) -> list[str]:
    """Each cell's margin of error text: the table's, or 0 on a structural zero."""
    mask = zero_cells(plan, spec) if plan.structural_zeros else np.zeros(0, dtype=bool)
    cells = spec.cells(plan.schema)
    return ["0" if mask.size and mask[k] else moe for k in range(cells)]


def constraints_html(release: Release) -> str:
    """The report's section on invariants and structural zeros ("" when the plan has none)."""
    plan = release.plan
    parts = []
    if plan.invariants:
        rows = "\n".join(
            f"<tr><td>{escape(spec.name)}</td><td>{escape(' × '.join(spec.by) or '(total)')}"
            f"</td><td>{spec.cells(plan.schema)}</td><td>none (exact)</td><td>0</td></tr>"
            for spec in plan.invariants
        )
        parts.append(
            f"""<h2>Invariant tables: exact counts, outside the guarantee</h2>
<div class="note"><p><strong>{escape(INVARIANT_NOTE)}</strong> The privacy guarantee above
covers the other tables only; what the exact counts reveal is not protected by it.</p></div>
<table><thead><tr><th>table</th><th>by</th><th>cells</th><th>mechanism</th><th>MoE</th></tr>
</thead><tbody>
{rows}
</tbody></table>"""
        )
    if plan.structural_zeros:
        items = "\n".join(f"<li>{escape(zero.describe())}</li>" for zero in plan.structural_zeros)
        counts = "\n".join(
            f"<tr><td>{escape(spec.name)}</td><td>{int(zero_cells(plan, spec).sum())}</td></tr>"
            for spec in plan.tables
        )
        parts.append(
            f"""<h2>Structural zeros</h2>
<p>{escape(ZEROS_NOTE)} Impossible combinations:</p>
<ul>
{items}
</ul>
<table><thead><tr><th>table</th><th>cells held at 0</th></tr></thead><tbody>
{counts}
</tbody></table>"""
        )
    return "\n".join(parts)
