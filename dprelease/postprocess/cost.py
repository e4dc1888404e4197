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

That per-table rate misses what grows with the cells rather than the tables (issue 35 bench):
8 tables of 16,000 cells sharing a one-value column took 22 s in the active set (27 solves
of up to CG_MAX_ITERATIONS each, estimated 0.7 s), and 7 tables of 3,300 cells 0.6 s a run
there and 0.9 s in the MILP rounding (estimated 0.08 s, so 20 accuracy reruns: 12.6 s). With
bounds, a run is now also counted as the active set's iterations (`ACTIVE_SET_ITERATIONS`,
which `bounded_projection` keeps to), each two products with C and one pass over rows and
cells, plus the MILP rounding's time limits (the whole problem's, per cell, and one per table
with three or more sub-tables to match, per cell); the larger of the two counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import ResourceError
from dprelease.limits import CONSISTENCY_WORK_NS
from dprelease.postprocess.consistency import (
    ACTIVE_SET_ITERATIONS,
    CG_MAX_ITERATIONS,
    structure,
)
from dprelease.postprocess.rounding import MILP_CELL_LIMIT, MILP_CELL_SECONDS

BOUNDED_NS = 500  # per unit of (entries + rows) × tables, with bounds and rounding
LINEAR_NS = 40  # the same, for one unbounded solve (consistency alone)
TABLE_MILP_OVERHEAD = 0.002  # seconds: a small table's MILP (held to TABLE_MILP_SECONDS)
ITERATION_NS = 1.5  # per (2 × entries + rows + cells) in one conjugate-gradient iteration
SHRUNK_FACTOR = 1.7  # `estimate: shrunk` measured 1.5–1.7× least squares' post-processing


def _cells(plan: Any, key: tuple[str, ...]) -> int:
    return int(np.prod([plan.schema[name].size for name in key], dtype=np.int64))


def run_ns(plan: Any, typical: bool = False) -> int:
    """The estimated work of one consistent post-processing of the plan's tables (0 when
    consistency is off or nothing is shared): its bound (what the active set and the MILPs
    are held to), or with `typical` the per-table rate plus the rounding's MILPs (what the
    accuracy reruns are counted at; their loop stops at ACCURACY_WORK_NS of CPU besides)."""
    settings = plan.postprocess.effective
    bys = tuple(spec.by for spec in (*plan.tables, *plan.invariants))
    if not settings.consistent or len(bys) < 2:
        return 0
    workload, constraints = structure(plan.schema, bys)
    rows, entries = constraints.matrix.shape[0], constraints.matrix.nnz
    lower, upper = settings.clamp
    bounded = settings.nonnegative or settings.integer or lower is not None or upper is not None
    bounded = bounded or bool(plan.structural_zeros)
    unit = BOUNDED_NS if bounded else LINEAR_NS
    factor = SHRUNK_FACTOR if settings.estimate == "shrunk" else 1.0
    work = (entries + rows) * len(bys) * unit
    if bounded:
        cells = constraints.matrix.shape[1]
        iterations = ACTIVE_SET_ITERATIONS + CG_MAX_ITERATIONS  # + the fallback's one solve
        solves = iterations * (2 * entries + rows + cells) * ITERATION_NS
        rounding = 0.0
        if settings.integer:  # the whole MILP's time limit, and the sequential's per table
            whole = max(0.2, cells * MILP_CELL_SECONDS) if cells <= MILP_CELL_LIMIT else 0.0
            tables = sum(
                TABLE_MILP_OVERHEAD + _cells(plan, key) * MILP_CELL_SECONDS
                for key in workload.keys
                if len(workload.predecessors(key)) >= 3
            )
            rounding = (whole + tables) * 1e9
        work = work + rounding if typical else max(work, solves + rounding)
    return int(work * factor)


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
