"""The synthesis share's rounds (issue 38.6), AIM's loop (McKenna et al. 2022) on the records:
the records are the model, each round chooses one pair privately by how far the model's
estimate of it is from its true counts (`measure`), measures it, and the model takes it
before the next round is scored.

- The model's estimate of a pair is the records' tabulation of it (public: the records are
  made from noisy measurements and public randomness alone). A tabulation is kept until a
  round moves one of its columns.
- The open candidates of a round are those not measured yet that the model can take: a pair
  across two groups of columns (`join.join_groups`), or inside one group when one of its
  columns is movable (`redraw`). When the rounds left are only as many as the groups still
  to join, only pairs across two groups are open (the microdata join every column, as MST's
  spanning tree does). A round with nothing open ends the loop (its budget is left unspent).
- Inside a group, the redrawn column is given its neighbours and the columns measured with
  it so far (each kept only while the redraw's table fits `plan.synthesis.MOVE_CELLS`); of
  the pair's movable columns, the one that keeps the most earlier pairs, then the smaller
  table, is redrawn.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.model import Plan
from dprelease.plan.synthesis import MOVE_CELLS, Pair, move_cells
from dprelease.synthetic.join import join_groups
from dprelease.synthetic.measure import (
    ShareDraw,
    SynthesisNoise,
    choose,
    measure_pair,
    pair_scores,
)
from dprelease.synthetic.records import cell_index
from dprelease.synthetic.redraw import redraw


def _given(
    plan: Plan, budget: ShareDraw, pair: Pair, moved: str, partners: set[str]
) -> tuple[frozenset[str], int]:
    """The columns a redraw of `moved` is given, and how many earlier partners it leaves out."""
    given = set(budget.shape.neighbours[moved])
    left_out = 0
    for partner in sorted(partners - given):
        if move_cells(plan, frozenset(given | {partner}), pair.first, pair.second) <= MOVE_CELLS:
            given.add(partner)
        else:
            left_out += 1
    return frozenset(given), left_out


def run_rounds(
    plan: Plan,
    budget: ShareDraw,
    counted: Mapping[str, np.ndarray],
    out: dict[str, np.ndarray],
    noise: SynthesisNoise,
    rng: np.random.Generator,
) -> tuple[tuple[Pair, np.ndarray], ...]:
    """The rounds, on the records `out` (every declared column), in place; the chosen pairs
    in the order chosen, with their raw noisy counts. `counted` (CONFIDENTIAL) is read by
    `measure` alone."""
    schema = plan.schema
    shape = budget.shape
    group = {column: shape.component_of(column) for column in shape.columns}
    partners: dict[str, set[str]] = {column: set() for column in shape.columns}
    rows = next(iter(out.values())).size if out else 0
    open_ = list(range(len(shape.candidates)))
    estimates: dict[int, np.ndarray] = {}
    chosen: list[tuple[Pair, np.ndarray]] = []
    for done in range(shape.rounds):
        to_join = len(set(group.values())) - 1
        crossing = [i for i in open_ if len({group[n] for n in shape.candidates[i].by}) == 2]
        inside = [] if to_join >= shape.rounds - done else [
            i for i in open_ if i not in crossing and shape.candidates[i].movable
        ]  # fmt: skip
        allowed = sorted(crossing + inside)
        if not allowed:
            if to_join:
                raise InternalError("no candidate pair joins the remaining groups")
            break
        for i in allowed:
            if i not in estimates:
                by = shape.candidates[i].by
                cells = schema[by[0]].size * schema[by[1]].size
                index = cell_index(schema, out, by, rows)
                estimates[i] = np.bincount(index, minlength=cells).astype(np.float64)
        pairs = [shape.candidates[i] for i in allowed]
        scores = pair_scores(budget, counted, pairs, [estimates[i] for i in allowed])
        at = allowed[choose(budget, scores, noise)]
        open_.remove(at)
        pair = shape.candidates[at]
        noisy = measure_pair(plan, budget, counted, pair, noise)
        chosen.append((pair, noisy))
        first, second = pair.by
        if at in crossing:
            moved = frozenset(n for n in shape.columns if group[n] == group[second])
            join_groups(plan, out, (first, second), noisy, moved, rng)
            for name in moved:
                group[name] = group[first]
        else:
            options = []
            for column in pair.movable:
                given, left_out = _given(plan, budget, pair, column, partners[column])
                cells = move_cells(plan, given, first, second)
                options.append((left_out, cells, column, given))
            _, _, column, given = min(options)
            other = second if column == first else first
            redraw(schema, out, (other, column), noisy if column == second else noisy.T,
                   given, rng)  # fmt: skip
            moved = frozenset({column})
        partners[first].add(second)
        partners[second].add(first)
        for i in list(estimates):
            if moved & set(shape.candidates[i].by):
                del estimates[i]
    return tuple(chosen)
