"""Published tables from the measured marginals (`strategy: auto`): least squares, then bounds.

1. `MeasurementSet.estimate`: the weighted least-squares estimate of the measured marginals
   under their shared sums (`consistency.weighted_projection`, weights 1/noise variance).
   Over real numbers, tables that agree on every shared sub-table are exactly the marginals of
   some table, so this is the generalised least-squares (best linear unbiased) estimate; each
   published table is then summed from a measurement that determines it, which gives the same
   numbers from any such measurement. Its error is the one `strategy.residual.ErrorModel`
   computes exactly before any data is read.
2. `derived_postprocess`: the plan's steps on those estimates. With `consistent`, the grand
   total is fixed first at its least-squares value (made non-negative and, when `integer`,
   rounded at random so that its mean is kept), as the Census TopDown fixes the nation
   first; non-negativity and controlled rounding then move counts among cells under that
   total and never into it, so the total stays unbiased. Without `consistent`, the steps run
   cell by cell as in `pipeline`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from dprelease.accounting.allocated import Allocation
from dprelease.accounting.counted import counted_tables
from dprelease.errors import InternalError
from dprelease.plan.model import Plan, Postprocess
from dprelease.plan.subtables import Workload, cell_map, determines, partial_columns
from dprelease.postprocess.consistency import Constraints, build_constraints, weighted_projection
from dprelease.postprocess.pipeline import (
    PostprocessResult,
    consistent_pipeline,
    postprocess,
    problem_of,
)
from dprelease.postprocess.top_down import fix_top_down, grand_total

TOTAL = "__grand_total__"  # the pinned grand total when no published table is one


def marginalise(counts: np.ndarray, mapping: np.ndarray, cells: int) -> np.ndarray:
    """Sum the cells of a table onto a coarser one (`mapping`: each cell's coarse cell)."""
    return np.bincount(mapping, weights=counts.astype(np.float64), minlength=cells)


@dataclass
class MeasurementSet:
    """The measurements of an allocation as one least-squares problem (built once)."""

    plan: Plan
    allocation: Allocation
    workload: Workload = field(init=False)
    constraints: Constraints = field(init=False)
    variances: np.ndarray = field(init=False)
    sources: dict[str, tuple[int, np.ndarray]] = field(init=False)  # table → (measurement, map)

    def __post_init__(self) -> None:
        schema = self.plan.schema
        measured = self.allocation.measurements
        self.workload = Workload(schema, tuple(m.spec.by for m in measured))
        self.constraints = build_constraints(self.workload)
        self.variances = np.concatenate([np.full(m.cells, m.noise.variance) for m in measured])
        self.sources = {}
        for spec in self.plan.tables:
            found = [i for i, m in enumerate(measured) if determines(schema, m.spec.by, spec.by)]
            if not found:
                raise InternalError(f"no measurement determines table '{spec.name}'")
            best = min(found, key=lambda i: measured[i].cells)
            self.sources[spec.name] = (best, cell_map(schema, measured[best].spec.by, spec.by))

    def true_measurements(self, counted: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each measurement's true counts, summed from a counted table that determines it: a
        published one, or for a union of two tables, the union itself (`counted_tables`)."""
        schema = self.plan.schema
        tables = counted_tables(self.plan)
        out = {}
        for m in self.allocation.measurements:
            spec = next((s for s in tables if determines(schema, s.by, m.spec.by)), None)
            if spec is None or spec.name not in counted:
                raise InternalError(f"measurement '{m.name}' was not counted from the data")
            mapping = cell_map(schema, spec.by, m.spec.by)
            summed = marginalise(counted[spec.name], mapping, m.cells)
            out[m.name] = np.rint(summed).astype(np.int64)
        return out

    def estimate(self, noisy: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The least-squares estimate of every published table from the noisy measurements."""
        measured = np.concatenate(
            [noisy[m.name].astype(np.float64) for m in self.allocation.measurements]
        )
        solution, _ = weighted_projection(self.constraints, measured, self.variances)
        parts = self.constraints.split(solution)
        return {
            spec.name: marginalise(parts[index], mapping, spec.cells(self.plan.schema))
            for spec in self.plan.tables
            for index, mapping in [self.sources[spec.name]]
        }


def derived_postprocess(
    plan: Plan,
    allocation: Allocation,
    estimates: dict[str, np.ndarray],
    settings: Postprocess | None = None,
    rng: np.random.Generator | None = None,
) -> PostprocessResult:
    """The plan's post-processing on least-squares estimates, keeping the grand total."""
    settings = settings or plan.postprocess
    if not settings.consistent:
        return postprocess(plan, allocation, estimates, settings)
    generator = rng or np.random.default_rng()
    tables = [(s.name, s.by) for s in plan.tables]
    values = dict(estimates)
    variances = {t.name: t.noise.variance for t in allocation.tables}
    # a table over a partial column sums to less than the total: take the total from another
    complete = [s.name for s in plan.tables if not partial_columns(plan.schema, s.by)]
    whole = estimates[(complete or [plan.tables[0].name])[0]]
    if not any(by == () for _, by in tables):
        tables.append((TOTAL, ()))
        values[TOTAL] = np.array([float(whole.sum())])
        variances[TOTAL] = min(variances.values())
    problem = problem_of(plan.schema, tables, values, variances)
    total = grand_total([whole], settings.nonnegative, settings.integer, generator)
    offsets = np.concatenate(
        [[0], np.cumsum([problem.workload.cells(i) for i in range(len(tables))])]
    )
    total_pin = {int(offsets[i]): total for i, (_, by) in enumerate(tables) if by == ()}
    pins = total_pin
    if _bounds_are_zero_or_none(settings):
        fixed = fix_top_down(
            plan.schema,
            [by for _, by in tables],
            [values[name] for name, _ in tables],
            total=total,
            integer=settings.integer,
            rng=generator,
        )
        pins = {
            int(offsets[i]) + k: float(value)
            for i, cells in fixed.items()
            for k, value in enumerate(cells)
        }
    try:
        result = consistent_pipeline(problem, settings, pinned=pins)
    except InternalError:
        # the tables left to the joint step have no non-negative completion of the fixed
        # ones (possible when three or more of them overlap in a cycle): fix the total only
        result = consistent_pipeline(problem, settings, pinned=total_pin)
    released = {k: v for k, v in result.released_counts.items() if k != TOTAL}
    return PostprocessResult(released, result.steps_applied, result.steps_skipped, result.rounding)


def _bounds_are_zero_or_none(settings: Postprocess) -> bool:
    """Top-down fixing projects onto x ≥ 0 only: other clamps go to the joint step alone."""
    lower, upper = settings.clamp
    return upper is None and lower in (None, 0) and (settings.nonnegative or lower == 0)
