"""Consistency: the weighted least-squares estimate of all tables under their shared sums.

Every released table i measured y_i = x_i + noise with per-cell variance v_i. The consistent
estimate minimises Σ_i ||x_i − y_i||² / v_i subject to C x = 0, where each row of C says that
one cell of a shared sub-table (or of a coarser geography level) sums to the same value in two
tables (`dprelease.plan.subtables.Workload.links`). This is the V⁻¹-orthogonal
projection onto the consistent tables, hence the best linear unbiased estimate under the
constraints (tables measured with more budget move less).

Solved through the Lagrange multipliers: (C V Cᵀ) λ = C y, x = y − V Cᵀ λ, with V = diag(v).
C V Cᵀ is sparse and positive semi-definite (singular where constraints repeat each other,
which is harmless because C y lies in its range), so preconditioned conjugate gradients solve
it without factorising; x then satisfies C x = 0 to ~1e-10 of the counts' size.

Bounds (non-negativity, clamp) are combined with consistency by an active set: cells that
fall below their lower bound (above the upper) are fixed at it, which is variance 0 in the
same solve, and the rest is re-solved, until no free cell leaves its bounds. Fixing never
breaks a constraint, so the result is exactly consistent and within bounds; it is the WLS
optimum over the cells left free (a standard, slightly conservative approximation to the
bounded optimum). All-zero tables are consistent, so a lower bound of 0 is always feasible.

scipy is imported inside the functions: the release path loads it only when consistency runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprelease.plan.schema import Schema
from dprelease.plan.subtables import Workload, key_cells

CG_TOL = 1e-10  # constraint error allowed, relative to the largest count
# A feasible solve takes under 70 iterations on the sample (3,527 constraints); an active set
# whose fixed cells leave no consistent solution never converges, and took 20 per constraint
# (70,540 iterations, 4-7 s, in every accuracy simulation: a release once ran 140 s). Such a
# solve fails the consistency check after this cap just as after 70,540.
CG_MAX_ITERATIONS = 2_000
ACTIVE_SET_ROUNDS = 100
# Freeing cells the KKT test wants off their bounds can cycle (fix a thousand cells, free
# them, fix them again: 100 rounds, then no consistent result; issue 35 bench plan 1). After
# this many freeing rounds the fixed set only grows, which ends (the last estimate is
# consistent and within bounds: the active set's standard, slightly conservative optimum).
RELEASE_ROUNDS = 8
# All the conjugate-gradient iterations one bounded projection may take (a round's solve may
# take up to CG_MAX_ITERATIONS of them when many cells are fixed: 27 such solves on 16,000
# cells took 22 s; issue 35 bench plan 22). `postprocess.cost` admits this many.
ACTIVE_SET_ITERATIONS = 5_000
FEASIBLE_TOL = 1e-6
INFEASIBLE_TOL = 1e-2  # a constraint error of 1% of the counts: diverged, not short


@dataclass(frozen=True)
class Constraints:
    """C (sparse, entries ±1) over the concatenated cells of all released tables."""

    matrix: Any  # scipy.sparse.csr_matrix
    offsets: tuple[int, ...]  # start of each table in the concatenated vector

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        return [values[a:b] for a, b in zip(self.offsets, self.offsets[1:], strict=False)]


def build_constraints(workload: Workload) -> Constraints:
    """One row per cell of every (table, shared key) link: table's sum − representative's sum."""
    from scipy import sparse

    sizes = [workload.cells(i) for i in range(len(workload.bys))]
    offsets = tuple(int(v) for v in np.concatenate([[0], np.cumsum(sizes)]))
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    row0 = 0
    for table, key, rep in workload.links():
        for member, sign in ((table, 1.0), (rep, -1.0)):
            target = workload.cell_map(member, key)
            rows.append(row0 + target)
            cols.append(offsets[member] + np.arange(target.size))
            vals.append(np.full(target.size, sign))
        row0 += key_cells(workload.schema, key)
    if not rows:
        matrix = sparse.csr_matrix((0, offsets[-1]))
    else:
        matrix = sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(row0, offsets[-1]),
        )
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
    return Constraints(matrix, offsets)


_STRUCTURES: dict[object, tuple[Workload, Constraints]] = {}
_STRUCTURES_KEPT = 4


def structure(schema: Schema, bys: tuple[tuple[str, ...], ...]) -> tuple[Workload, Constraints]:
    """The workload of tables `bys` and its constraints, built once per release: the accuracy
    simulation post-processes the same tables again and again, and 220 three-way tables took
    about 0.5 s to build each time (issue 35, finding 9). Public structure only (no counts)."""
    try:
        key: object = (schema, bys)
        found = _STRUCTURES.get(key)
    except TypeError:  # a schema holding an unhashable value: built each time
        workload = Workload(schema, bys)
        return workload, build_constraints(workload)
    if found is None:
        workload = Workload(schema, bys)
        found = _STRUCTURES[key] = (workload, build_constraints(workload))
        while len(_STRUCTURES) > _STRUCTURES_KEPT:
            del _STRUCTURES[next(iter(_STRUCTURES))]
    return found


def _solve_multipliers(
    matrix: Any,
    variances: np.ndarray,
    rhs: np.ndarray,
    guess: Any,
    atol: float,
    budget: list[int] | None = None,
) -> np.ndarray:
    """λ with (C V Cᵀ) λ = rhs by Jacobi-preconditioned conjugate gradients.

    The residual rhs − C V Cᵀ λ is C x, the constraint error; it is driven below `atol`, an
    absolute tolerance on the counts' scale: a relative one would chase the rounding dust of
    an already consistent input into huge multipliers.

    C V Cᵀ is applied as C (V (Cᵀ p)), never formed: over many overlapping tables it fills
    in (220 three-way tables over two-valued columns: 12,000 entries of C, 242,000 of C V Cᵀ),
    and each product then cost five times the two thin ones. The loop is plain numpy (scipy's
    `cg` spent more per iteration on its own bookkeeping than on the products; issue 35,
    finding 9); it is the same iteration, to the same tolerance and cap. `budget` (one
    count, of iterations left to a caller's several solves) caps it further, and is spent.
    """
    size = matrix.shape[0]
    transposed = matrix.T.tocsr()
    diagonal = matrix.multiply(matrix) @ variances  # diag(C V Cᵀ): Σ_j C_ij² v_j
    inverse = np.where(diagonal > 0, 1.0 / np.where(diagonal > 0, diagonal, 1.0), 0.0)
    solution = np.zeros(size) if guess is None else np.array(guess, dtype=np.float64)
    if float(np.linalg.norm(rhs)) <= atol:
        return np.zeros(size)
    with np.errstate(all="ignore"):  # infeasible fixed bounds break down to NaN: caught later
        residual = rhs - matrix @ (variances * (transposed @ solution))
        step = inverse * residual
        direction = step.copy()
        rz = float(residual @ step)
        cap = min(20 * size, CG_MAX_ITERATIONS, *(budget or ()))
        for _ in range(cap):
            if budget is not None:
                budget[0] -= 1
            if not math.sqrt(float(residual @ residual)) > atol:  # done (or NaN)
                break
            product = matrix @ (variances * (transposed @ direction))
            curvature = float(direction @ product)
            if not curvature > 0:
                break
            alpha = rz / curvature
            solution += alpha * direction
            residual -= alpha * product
            step = inverse * residual
            rz, previous = float(residual @ step), rz
            direction *= rz / previous
            direction += step
    return solution


def weighted_projection(
    constraints: Constraints,
    measured: np.ndarray,
    variances: np.ndarray,
    guess: np.ndarray | None = None,
    budget: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """argmin Σ (x − y)²/v subject to C x = 0 (cells with v = 0 stay as measured).

    Returns the estimate and the multipliers (a warm start for the next solve).
    """
    matrix = constraints.matrix
    if matrix.shape[0] == 0:
        return measured.copy(), np.zeros(0)
    residual = matrix @ measured
    atol = CG_TOL * max(1.0, float(np.abs(measured).max(initial=0.0)))
    multipliers = _solve_multipliers(matrix, variances, residual, guess, atol, budget)
    estimate = measured - variances * (matrix.T @ multipliers)
    return estimate, multipliers


def is_consistent(
    constraints: Constraints, values: np.ndarray, tol: float = 1e-7, measured: float = 0.0
) -> bool:
    """C x = 0 up to `tol` relative to the size of the counts (or of the `measured` counts'
    largest, when larger: the solve's own tolerance is relative to them, and an estimate the
    bounds pushed to about 0 keeps that absolute error; issue 35 bench plan 1)."""
    if constraints.matrix.shape[0] == 0:
        return True
    scale = max(1.0, float(np.abs(values).max(initial=0.0)), measured)
    return bool(np.abs(constraints.matrix @ values).max(initial=0.0) <= tol * scale)


def bounded_projection(
    constraints: Constraints,
    measured: np.ndarray,
    variances: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray | None:
    """Consistent estimate within [lower, upper] by the active set; None when infeasible.

    Starts from the unbounded projection; each round fixes every free cell outside its bounds
    at the bound it crossed and re-solves the rest (and frees, up to RELEASE_ROUNDS times, the
    fixed cells that want to leave their bounds). At most ACTIVE_SET_ITERATIONS
    conjugate-gradient iterations in all (what admission counts, `postprocess.cost`): past
    them, None.
    """
    fixed_values = measured.copy()
    free_variances = variances.copy()
    budget = [ACTIVE_SET_ITERATIONS]
    estimate, multipliers = weighted_projection(constraints, measured, variances, None, budget)
    size = float(np.abs(measured).max(initial=0.0))
    tol = 1e-9 * max(1.0, size)
    releases = 0
    for _ in range(ACTIVE_SET_ROUNDS):
        free = free_variances > 0
        below = free & (estimate < lower - tol)
        above = free & (estimate > upper + tol)
        if not (below.any() or above.any()):
            # KKT: a fixed cell whose unconstrained value given λ lies inside its bounds
            # wants to move off the bound; free it and solve again
            wanted = measured - variances * (constraints.matrix.T @ multipliers)
            fixed = (free_variances == 0) & (variances > 0)
            release = fixed & (wanted > lower + tol) & (wanted < upper - tol)
            releases += 1
            if not release.any() or releases > RELEASE_ROUNDS:
                break
            fixed_values[release] = measured[release]
            free_variances[release] = variances[release]
        else:
            fixed_values[below] = lower[below]
            fixed_values[above] = upper[above]
            free_variances[below | above] = 0.0
        estimate, multipliers = weighted_projection(
            constraints, fixed_values, free_variances, multipliers, budget
        )
        if budget[0] <= 0:  # out of the work admitted (issue 35 bench plan 22: 34 s)
            return None
        if not is_consistent(constraints, estimate, INFEASIBLE_TOL, size):
            # the fixed cells have no consistent completion (the solve diverged), and fixing
            # more cannot give them one: each further round was a solve to the iteration cap
            # (issue 35, finding 9). A solve merely short of FEASIBLE_TOL goes on, warm-started.
            return None
    else:  # many rounds: fix all remaining offenders at once (still consistent if feasible)
        estimate = np.clip(estimate, lower, upper)
    if not is_consistent(constraints, estimate, FEASIBLE_TOL, size):
        return None
    # bounds hold exactly for fixed cells; snap float dust on free ones
    result: np.ndarray = np.clip(estimate, lower, upper)
    return result
