"""Post-processing of noisy counts: it reads only the noisy measurements, so it costs no privacy.

The steps run in this fixed order (`STEP_ORDER`), each switched on or off in the plan's
`postprocess`:

1. ``consistent`` — weighted least squares over all tables, weights 1/noise variance, under
   the constraints that every sub-table two tables share agrees (age×sex summed over age is
   the sex table; all totals are equal) and that every table measured at two geography levels
   adds up (county×sex summed over the counties of a state is that state's state×sex row).
   The best linear unbiased estimate under the constraints (`dprelease.postprocess.consistency`).
2. ``clamp`` — every count within the plan's [lower, upper];
3. ``nonnegative`` — no count below 0;
4. ``integer`` — whole numbers.

Without ``consistent``, steps 2–4 work cell by cell (clip, clip, round half to even). With it,
they keep the constraints exactly: the bounds of steps 2 and 3 are solved together with the
least squares (active set: cells that leave their bounds are fixed at them and the rest is
re-solved, until the KKT conditions hold), and step 4 is controlled rounding
(`dprelease.postprocess.rounding`), so the released integers still agree table with table
and level with level. A lower bound of 0 can always be met with consistency (all-zero tables are
consistent); other clamp bounds may not be (a cell and its sub-total cannot both equal an
upper bound), in which case the tables are released consistent and non-negative without
that clamp, and ``clamp`` is reported as skipped.

Every step is idempotent: applying the pipeline to its own output changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dprelease.accounting.allocation import Allocation
from dprelease.errors import InternalError
from dprelease.plan.model import Plan, Postprocess
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import Workload
from dprelease.plan.zeros import StructuralZero, zero_mask
from dprelease.postprocess.consistency import (
    Constraints,
    bounded_projection,
    structure,
    weighted_projection,
)
from dprelease.postprocess.rounding import RoundingFailed, RoundingMethod, controlled_round
from dprelease.postprocess.shrinkage import shrink_tables
from dprelease.postprocess.weight_groups import mixed, weight_groups

STEP_ORDER = ("consistent", "clamp", "nonnegative", "integer")


@dataclass(frozen=True)
class PostprocessResult:
    """Released counts per table, the steps that ran, and the ones that could not."""

    released_counts: dict[str, np.ndarray]
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]
    rounding: str | None = None  # "milp" or "sequential" when controlled rounding ran


def clamp(values: np.ndarray, lower: float | None, upper: float | None) -> np.ndarray:
    """Bound values to [lower, upper]; None leaves that side open."""
    return np.clip(values, lower, upper) if (lower is not None or upper is not None) else values


def round_to_integers(values: np.ndarray) -> np.ndarray:
    """Nearest whole number (halves to even), as int64."""
    rounded: np.ndarray = np.rint(values).astype(np.int64)
    return rounded


def _cellwise(
    noisy: dict[str, np.ndarray], settings: Postprocess
) -> tuple[dict[str, np.ndarray], list[str]]:
    applied: list[str] = []
    released = {name: counts.astype(np.float64) for name, counts in noisy.items()}
    lower, upper = settings.clamp
    if lower is not None or upper is not None:
        released = {name: clamp(v, lower, upper) for name, v in released.items()}
        applied.append("clamp")
    if settings.nonnegative:
        released = {name: clamp(v, 0.0, None) for name, v in released.items()}
        applied.append("nonnegative")
    if settings.integer:
        released = {name: round_to_integers(v) for name, v in released.items()}
        applied.append("integer")
    return released, applied


@dataclass(frozen=True)
class Problem:
    """The released tables as one vector, with their constraints, variances and bounds."""

    names: tuple[str, ...]
    workload: Workload
    constraints: Constraints
    measured: np.ndarray
    variances: np.ndarray
    # cells held at a value (issue 27): structural zeros at 0, invariant tables at their
    # exact counts; measured there, variance 0, and pinned by every step
    fixed: dict[int, float] = field(default_factory=dict)

    def split(self, values: np.ndarray) -> dict[str, np.ndarray]:
        sizes = [self.workload.cells(i) for i in range(len(self.names))]
        parts = np.split(values, np.cumsum(sizes)[:-1])
        return dict(zip(self.names, parts, strict=True))


def make_problem(
    plan: Plan,
    allocation: Allocation,
    noisy: dict[str, np.ndarray],
    invariant_counts: Mapping[str, np.ndarray] | None = None,
) -> Problem:
    """The plan's tables as one problem, weighted by their measurement noise; with
    `invariant_counts`, the invariant tables too, held at their exact counts."""
    specs = plan.tables
    variances = {s.name: allocation.table(s.name).noise.variance for s in specs}
    tables = [(s.name, s.by) for s in specs]
    values = dict(noisy)
    exact = set()
    if invariant_counts is not None:
        for spec in plan.invariants:
            tables.append((spec.name, spec.by))
            values[spec.name] = invariant_counts[spec.name]
            variances[spec.name] = 0.0
            exact.add(spec.name)
    return problem_of(
        plan.schema, tables, values, variances, zeros=plan.structural_zeros, exact=exact
    )


def problem_of(
    schema: Schema,
    tables: Sequence[tuple[str, tuple[str, ...]]],
    values: dict[str, np.ndarray],
    variances: dict[str, float],
    *,
    zeros: Sequence[StructuralZero] = (),
    exact: Collection[str] = (),
) -> Problem:
    """Tables (name, by) with their values and per-cell variance, as one problem; the cells of
    `zeros` and every cell of the tables named in `exact` are held fixed (`Problem.fixed`)."""
    bys = tuple(by for _, by in tables)
    workload, constraints = structure(schema, bys)
    for index, (name, _) in enumerate(tables):
        counts = values.get(name)
        if counts is None or counts.shape != (workload.cells(index),):
            raise InternalError(f"noisy counts of table '{name}' do not match the plan")
    measured = np.concatenate([values[name].astype(np.float64) for name, _ in tables])
    variance = np.concatenate(
        [np.full(workload.cells(i), variances[name]) for i, (name, _) in enumerate(tables)]
    )
    held = np.zeros(measured.size, dtype=bool)
    start = 0
    for index, (name, by) in enumerate(tables):
        cells = workload.cells(index)
        if name in exact:
            held[start : start + cells] = True
        elif zeros:
            zero = zero_mask(schema, zeros, by)
            measured[start : start + cells][zero] = 0.0
            held[start : start + cells] |= zero
        start += cells
    variance[held] = 0.0
    return Problem(
        names=tuple(name for name, _ in tables),
        workload=workload,
        constraints=constraints,
        measured=measured,
        variances=variance,
        fixed={int(i): float(measured[i]) for i in np.flatnonzero(held)},
    )


def shrunk_problem(problem: Problem) -> Problem:
    """The problem with every table shrunk toward what its sub-tables predict, weighted by
    the shrunk estimate's variance (`estimate: shrunk`; `postprocess.shrinkage`)."""
    workload = problem.workload
    values, variances = shrink_tables(
        workload.schema,
        workload.bys,
        list(problem.split(problem.measured).values()),
        list(problem.split(problem.variances).values()),
    )
    return replace(problem, measured=np.concatenate(values), variances=np.concatenate(variances))


def consistent_pipeline(
    problem: Problem,
    settings: Postprocess,
    rounding: RoundingMethod = "auto",
    pinned: dict[int, float] | None = None,
    fallback: bool = True,
) -> PostprocessResult:
    """The four steps with ``consistent`` on: every step keeps the constraints exactly.

    `pinned` (cell index → value) holds cells at a value: their bounds are that value, so the
    other steps move counts around them (`dprelease.postprocess.derived` pins the grand total).
    Without `fallback`, bounds or rounding that cannot be met raise InternalError (the caller
    tries fewer pins); with it, the step is skipped and said so (issue 35 bench plans 1, 22).
    """
    constraints = problem.constraints
    applied = ["consistent"]
    skipped: list[str] = []
    lower_value, upper_value = settings.clamp
    lower_bound = -math.inf if lower_value is None else float(lower_value)
    upper_bound = math.inf if upper_value is None else float(upper_value)
    wants_clamp = lower_value is not None or upper_value is not None
    if settings.nonnegative:
        lower_bound = max(lower_bound, 0.0)
    size = problem.measured.size
    pins = {**problem.fixed, **(pinned or {})}
    measured = problem.measured
    if problem.fixed:  # a simulation swaps `measured`: the held cells keep their values
        measured = measured.copy()
        measured[list(problem.fixed)] = list(problem.fixed.values())
    lower = _pin(np.full(size, lower_bound), pins)
    upper = _pin(np.full(size, upper_bound), pins)
    if wants_clamp or settings.nonnegative or pins:
        estimate = bounded_projection(constraints, measured, problem.variances, lower, upper)
        if estimate is None and wants_clamp:  # the clamp cannot hold with consistency: x ≥ 0
            skipped.append("clamp")
            wants_clamp = False
            lower = _pin(np.full(size, 0.0 if settings.nonnegative else -math.inf), pins)
            upper = _pin(np.full(size, math.inf), pins)
            estimate = bounded_projection(constraints, measured, problem.variances, lower, upper)
        nonnegative = settings.nonnegative
        if estimate is None and not fallback:
            raise InternalError("no consistent tables within the bounds and pins")
        if estimate is None:  # out of its admitted work (or numerically lost): consistency
            # alone, the held cells kept, and said so (issue 35 bench plans 1 and 22)
            skipped += ["nonnegative"] if nonnegative else []
            nonnegative = False
            lower = _pin(np.full(size, -math.inf), pins)
            upper = _pin(np.full(size, math.inf), pins)
            estimate, _ = weighted_projection(constraints, measured, problem.variances)
        applied += ["clamp"] if wants_clamp else []
        applied += ["nonnegative"] if nonnegative else []
    else:
        estimate, _ = weighted_projection(constraints, measured, problem.variances)
    method = None
    if settings.integer:
        held = problem.variances <= 0  # fixed cells: pinned by their bounds, no weight needed
        weights = np.where(held, 0.0, 1.0 / np.where(held, 1.0, problem.variances))
        try:
            estimate, method = controlled_round(
                problem.workload, constraints, estimate, weights, lower, upper, rounding
            )
            applied.append("integer")
        except RoundingFailed as failed:  # no whole tables meet the rounded sub-tables
            if not fallback:
                raise InternalError(str(failed)) from failed
            skipped.append("integer")
    return PostprocessResult(problem.split(estimate), tuple(applied), tuple(skipped), method)


def _pin(bounds: np.ndarray, pins: dict[int, float]) -> np.ndarray:
    for index, value in pins.items():
        bounds[index] = value
    return bounds


def merged(parts: Sequence[PostprocessResult]) -> PostprocessResult:
    """The results of groups of tables post-processed apart, as one (steps in STEP_ORDER)."""
    released = {name: v for part in parts for name, v in part.released_counts.items()}
    applied = {step for part in parts for step in part.steps_applied}
    skipped = {step for part in parts for step in part.steps_skipped}
    return PostprocessResult(
        released,
        tuple(s for s in STEP_ORDER if s in applied),
        tuple(s for s in STEP_ORDER if s in skipped),
        next((part.rounding for part in parts if part.rounding), None),
    )


def postprocess(
    plan: Plan,
    allocation: Allocation,
    noisy_counts: dict[str, np.ndarray],
    settings: Postprocess | None = None,
    *,
    rounding: RoundingMethod = "auto",
    invariant_counts: Mapping[str, np.ndarray] | None = None,
) -> PostprocessResult:
    """Apply the steps switched on in `settings` (default: the plan's), in `STEP_ORDER`.

    `noisy_counts` holds every noisy table of the plan; the noise variances come from
    `allocation`. Structural zeros are held at 0. `invariant_counts` (the exact counts of the
    plan's invariant tables, published as they are) are held fixed too, and the result holds
    them; without it (a simulation) the invariants are left out.
    """
    settings = settings or plan.postprocess
    if mixed(plan):  # issue 37.8: counts and each weight's totals apart
        parts = [
            postprocess(
                g.plan,
                g.allocation,
                {t.name: noisy_counts[t.name] for t in g.plan.tables},
                g.settings,
                rounding=rounding,
                invariant_counts=invariant_counts,
            )
            for g in weight_groups(plan, allocation, settings)
        ]
        return merged(parts)
    if settings.consistent:
        problem = make_problem(plan, allocation, noisy_counts, invariant_counts)
        return consistent_pipeline(problem, settings, rounding)
    released, applied = _cellwise(noisy_counts, settings)
    for spec in plan.tables if plan.structural_zeros else ():  # impossible cells are 0
        if spec.name in released:
            released[spec.name][zero_mask(plan.schema, plan.structural_zeros, spec.by)] = 0
    for spec in plan.invariants:  # exact, as given (left out of a simulation: None)
        if invariant_counts is not None:
            released[spec.name] = np.asarray(invariant_counts[spec.name], dtype=np.int64)
    return PostprocessResult(released, tuple(applied), ())
