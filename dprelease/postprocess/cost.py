"""What the consistent post-processing of a plan's tables costs, from the plan alone (issue 35).

Consistency solves (C V Cᵀ) λ = C y by conjugate gradients, once without bounds and once per
active-set round with them, each iteration two products with C (its entries) and a few
vector operations over its rows; controlled rounding then walks the same constraints table
by table, and the active-set rounds grow with the tables that overlap. One post-processing
run costs about (entries of C + rows of C) × tables × a per-unit time, calibrated here on the
issue's two plans (220 three-way tables over 12 two-valued columns: 23,376 entries, 3,891
rows, about 3 s a run with bounds and rounding; 276 pairs over 24 columns: 6,424 and 1,331,
about 0.4 s) and the bundled sample (16 tables, well under a second).
The constraints are built from the plan's tables (public), once: `consistency.structure`
keeps them for the release that follows.
"""

from __future__ import annotations

from typing import Any

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import ResourceError
from dprelease.limits import CONSISTENCY_WORK_NS
from dprelease.postprocess.consistency import structure

BOUNDED_NS = 500  # per unit of (entries + rows) × tables, with bounds and rounding
LINEAR_NS = 40  # the same, for one unbounded solve (consistency alone)
SHRUNK_FACTOR = 1.7  # `estimate: shrunk` measured 1.5–1.7× least squares' post-processing


def run_ns(plan: Any) -> int:
    """The estimated work of one consistent post-processing of the plan's tables (0 when
    consistency is off or nothing is shared)."""
    settings = plan.postprocess.effective
    bys = tuple(spec.by for spec in (*plan.tables, *plan.invariants))
    if not settings.consistent or len(bys) < 2:
        return 0
    _, constraints = structure(plan.schema, bys)
    rows, entries = constraints.matrix.shape[0], constraints.matrix.nnz
    lower, upper = settings.clamp
    bounded = settings.nonnegative or settings.integer or lower is not None or upper is not None
    unit = BOUNDED_NS if bounded or plan.structural_zeros else LINEAR_NS
    factor = SHRUNK_FACTOR if settings.estimate == "shrunk" else 1.0
    return int((entries + rows) * len(bys) * unit * factor)


def consistency_estimate(plan: Any, data: DataSize) -> Estimate:
    """Admission's estimate of the release's consistency step; refused over
    CONSISTENCY_WORK_NS in one line, before any noise."""
    work = run_ns(plan)
    if work > CONSISTENCY_WORK_NS:
        raise ResourceError(
            f"Making the plan's {len(plan.tables)} tables consistent would take about "
            f"{work / 1e9:,.0f} s, above CONSISTENCY_WORK_NS ({CONSISTENCY_WORK_NS / 1e9:g} s): "
            "drop tables that overlap, or switch postprocess.consistent off."
        )
    path = "consistent" if work else "cell by cell"
    cells = sum(spec.cells(plan.schema) for spec in plan.tables)
    return Estimate("consistency", work, cells * 8 * 16, "CONSISTENCY_WORK_NS", path)


register("consistency", consistency_estimate)
