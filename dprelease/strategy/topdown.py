"""Non-negative whole tables that keep their parents' sums, top-down (post-processing).

From the least-squares estimates (unbiased, consistent, real), the grand total is fixed first
and then each table in turn, coarse to fine, keeping the already fixed cells of its parent:

1. `project_to_sums`: in each group of cells that sums to one parent cell, the Euclidean
   projection onto {x ≥ 0, Σ x = parent}: x = max(v − τ, 0) with τ chosen per group. Totals
   are kept exactly, so nothing is pushed up: non-negativity moves counts between the cells
   of a group, never into the total.
2. `round_keeping_sums`: floor, then systematic randomised rounding within each group: with
   cumulative fractional parts C_k and one uniform u per group, cell k rounds up
   ⌊C_k + 1 − u⌋ − ⌊C_{k−1} + 1 − u⌋ times (0 or 1). E[rounded] = x for every cell and the
   group sum is exact.

Pure numpy over cell arrays; randomness is post-processing (no privacy cost) and comes from
the generator the caller passes.
"""

from __future__ import annotations

import numpy as np


def project_to_sums(values: np.ndarray, groups: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Per group g, argmin ‖x − v‖ subject to x ≥ 0 and Σ_{groups = g} x = sums[g] ≥ 0."""
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.int64)
    order = np.lexsort((-values, groups))  # by group, then value descending
    v, g = values[order], groups[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(v.size) - np.repeat(starts, np.diff(np.r_[starts, v.size]))
    cumulative = np.cumsum(v)
    before = np.repeat(np.r_[0.0, cumulative[starts[1:] - 1]], np.diff(np.r_[starts, v.size]))
    running = cumulative - before  # Σ of the rank+1 largest in the group
    target = np.asarray(sums, dtype=np.float64)[g]
    tau_k = (running - target) / (rank + 1)
    active = v - tau_k > 0
    # τ = τ_k at the largest k still active; every group has at least its top cell active
    last = np.zeros(int(groups.max()) + 1 if groups.size else 0, dtype=np.int64)
    np.maximum.at(last, g, np.where(active, rank, 0))
    tau = np.zeros_like(last, dtype=np.float64)
    chosen = rank == last[g]
    tau[g[chosen]] = tau_k[chosen]
    result = np.empty_like(values)
    result[order] = np.maximum(v - tau[g], 0.0)
    return result


def round_keeping_sums(
    values: np.ndarray, groups: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Whole numbers with the same group sums (which must be whole), unbiased per cell."""
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.int64)
    floor = np.floor(values)
    fraction = values - floor
    order = np.argsort(groups, kind="stable")
    g, f = groups[order], fraction[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, g.size])
    cumulative = np.cumsum(f)
    base = np.repeat(np.r_[0.0, cumulative[starts[1:] - 1]], sizes)
    within = cumulative - base
    totals = np.repeat(within[starts + sizes - 1], sizes)
    within = np.where(np.isclose(within, np.round(within), atol=1e-7), np.round(within), within)
    within = np.minimum(within, np.round(totals))
    shift = np.repeat(1 - rng.random(starts.size), sizes)  # 1 − u, u ∈ [0, 1)
    previous = np.r_[0.0, within[:-1]]
    previous[starts] = 0.0
    up = np.floor(within + shift) - np.floor(previous + shift)
    result = np.empty_like(values)
    result[order] = floor[order] + up
    return result


def top_down(
    estimates: list[np.ndarray],
    parents: list[tuple[int, np.ndarray] | None],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Fix the tables in order: `parents[i]` is None for the grand total (one cell), else
    (index of an earlier table, for each cell of table i its cell in that parent)."""
    fixed: list[np.ndarray] = []
    for estimate, parent in zip(estimates, parents, strict=True):
        if parent is None:
            total = max(float(np.sum(estimate)), 0.0)
            whole = np.floor(total) + float(rng.random() < total - np.floor(total))
            fixed.append(np.array([whole]))
            continue
        index, cell_of = parent
        sums = fixed[index]
        projected = project_to_sums(estimate, cell_of, sums)
        fixed.append(round_keeping_sums(projected, cell_of, rng))
    return fixed
