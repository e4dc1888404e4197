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
from dprelease.plan.subtables import (
    Workload,
    cell_map,
    closure,
    determines,
    partial_columns,
)
from dprelease.plan.zeros import zero_mask
from dprelease.postprocess.consistency import Constraints, structure, weighted_projection
from dprelease.postprocess.pipeline import (
    PostprocessResult,
    consistent_pipeline,
    postprocess,
    problem_of,
    shrunk_problem,
)
from dprelease.postprocess.top_down import fix_top_down, grand_total

TOTAL = "__grand_total__"  # the pinned grand total when no published table is one


def marginalise(counts: np.ndarray, mapping: np.ndarray, cells: int) -> np.ndarray:
    """Sum the cells of a table onto a coarser one (`mapping`: each cell's coarse cell)."""
    return np.bincount(mapping, weights=counts.astype(np.float64), minlength=cells)


@dataclass
class MeasurementSet:
    """The measurements of an allocation as one least-squares problem (built once).

    Structural zeros are held at 0 in every measurement that contains them (known, variance
    0), and with `invariant_counts` the invariant tables join as exact measurements: the
    least squares then spreads what they tell over every other estimate (issue 27).
    """

    plan: Plan
    allocation: Allocation
    invariant_counts: Mapping[str, np.ndarray] | None = None
    workload: Workload = field(init=False)
    constraints: Constraints = field(init=False)
    variances: np.ndarray = field(init=False)
    held: np.ndarray = field(init=False)  # cells known exactly (zeros, invariants)
    sources: dict[str, tuple[int, np.ndarray]] = field(init=False)  # table → (measurement, map)

    def __post_init__(self) -> None:
        schema = self.plan.schema
        measured = self.allocation.measurements
        exact = self.plan.invariants if self.invariant_counts is not None else ()
        bys = tuple(m.spec.by for m in measured) + tuple(s.by for s in exact)
        self.workload, self.constraints = structure(schema, bys)
        zeros = self.plan.structural_zeros
        self.held = np.concatenate(
            [zero_mask(schema, zeros, m.spec.by) for m in measured]
            + [np.ones(s.cells(schema), dtype=bool) for s in exact]
            + [np.zeros(0, dtype=bool)]
        )
        self.variances = np.concatenate(
            [np.full(m.cells, m.noise.variance) for m in measured]
            + [np.zeros(s.cells(schema)) for s in exact]
            + [np.zeros(0)]
        )
        self.variances[self.held] = 0.0
        self.sources = {}
        # `determines` on each measurement's closure computed once (issue 35: 220 tables ×
        # their measurements made ~100,000 calls, each walking the columns' ancestors)
        closed = [closure(schema, m.spec.by) for m in measured]
        partial = [partial_columns(schema, m.spec.by) for m in measured]
        for spec in self.plan.tables:
            kept, wanted = closure(schema, spec.by), set(spec.by)
            found = [i for i in range(len(measured)) if wanted <= closed[i] and partial[i] <= kept]
            if not found:
                raise InternalError(f"no measurement determines table '{spec.name}'")
            best = min(found, key=lambda i: measured[i].cells)
            self.sources[spec.name] = (best, cell_map(schema, measured[best].spec.by, spec.by))

    def _exact_cells(self) -> np.ndarray:
        """The cells of the invariant tables (after the measurements' cells)."""
        out = np.zeros(self.held.size, dtype=bool)
        if self.invariant_counts is not None:
            out[sum(m.cells for m in self.allocation.measurements) :] = True
        return out

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
        exact = self.invariant_counts or {}
        invariants = self.plan.invariants if self.invariant_counts is not None else ()
        measured = np.concatenate(
            [noisy[m.name].astype(np.float64) for m in self.allocation.measurements]
            + [np.asarray(exact[s.name], dtype=np.float64) for s in invariants]
        )
        measured[self.held & ~self._exact_cells()] = 0.0  # structural zeros
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
    invariant_counts: Mapping[str, np.ndarray] | None = None,
) -> PostprocessResult:
    """The plan's post-processing on least-squares estimates, keeping the grand total.

    Structural zeros stay 0; with `invariant_counts` the invariant tables are held at their
    exact counts, and the grand total is theirs (exact, not rounded at random)."""
    settings = settings or plan.postprocess
    if not settings.consistent:
        return postprocess(plan, allocation, estimates, settings, invariant_counts=invariant_counts)
    generator = rng or np.random.default_rng()
    tables = [(s.name, s.by) for s in plan.tables]
    values = dict(estimates)
    variances = {t.name: t.noise.variance for t in allocation.tables}
    invariants = plan.invariants if invariant_counts is not None else ()
    for spec in invariants:
        tables.append((spec.name, spec.by))
        values[spec.name] = np.asarray((invariant_counts or {})[spec.name], dtype=np.float64)
        variances[spec.name] = 0.0
    # a table over a partial column sums to less than the total: take the total from another
    complete = [name for name, by in tables if not partial_columns(plan.schema, by)]
    whole = values[(complete or [plan.tables[0].name])[0]]
    if not any(by == () for _, by in tables):
        tables.append((TOTAL, ()))
        values[TOTAL] = np.array([float(whole.sum())])
        variances[TOTAL] = min(v for v in variances.values() if v > 0)
    problem = problem_of(
        plan.schema,
        tables,
        values,
        variances,
        zeros=plan.structural_zeros,
        exact={spec.name for spec in invariants},
    )
    if settings.estimate == "shrunk":
        problem = shrunk_problem(problem)
        values = problem.split(problem.measured)
    exact_total = [n for n in complete if n in {s.name for s in invariants}]
    if exact_total:
        total = float(values[exact_total[0]].sum())
    else:
        total = grand_total([whole], settings.nonnegative, settings.integer, generator)
    offsets = np.concatenate(
        [[0], np.cumsum([problem.workload.cells(i) for i in range(len(tables))])]
    )
    total_pin = {int(offsets[i]): total for i, (_, by) in enumerate(tables) if by == ()}
    pins = total_pin
    # top-down fixing knows neither zeros nor exact tables: the joint step holds them
    if _bounds_are_zero_or_none(settings) and not problem.fixed:
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
        result = consistent_pipeline(problem, settings, pinned=pins, fallback=False)
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
