"""A chosen pair inside one group of columns (issue 38.6): the model takes its measurement by
redrawing one of its columns, b, given the columns beside it.

The given columns S are b's neighbours (`plan.synthesis.neighbours`: the other columns of
every published table that holds b, and its ancestors) and the columns of the pairs measured
with b so far. Every published table that holds b lies inside S ∪ {b}, and so does every
earlier pair of b; nothing else holds b. The redraw keeps the records' joint of (S, b) and
of (S, a) exactly and moves b alone, so all of those still tabulate as before, exactly, and
every other column stays where it is.

The new joint of (S, a, b): starting from the model's (a and b independent given S: the
records' (S, a) and (S, b) margins), iterative proportional fitting to the pair's noisy
counts (clipped at zero, plus one so that no cell is ruled out by noise alone) and to both
margins, the margins applied last and then alone until they hold (the noisy table is fitted
as far as they allow: Private-PGM's estimate of a pair given exact margins). Each S cell's
a × b table is then rounded keeping both its margins exactly (`join.round_two_way`), and
every row with (S, a) takes one of the b values its cell of the table gives.
"""

from __future__ import annotations

import numpy as np

from dprelease.errors import InternalError
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import reduce_key
from dprelease.plan.synthesis import REFIT_ROUNDS
from dprelease.synthetic.join import RAKE_TOL, round_two_way
from dprelease.synthetic.records import CODE_TYPE, cell_index, hand_out, strata


def _scale(values: np.ndarray, wanted: np.ndarray, axis: int) -> None:
    """Scale `values` (G × A × B) in place so that its sums over `axis` are `wanted`."""
    current = values.sum(axis=axis)
    ratio = np.divide(wanted, current, out=np.zeros_like(wanted), where=current > 0)
    values *= np.expand_dims(ratio, axis)


def fit_given(current: np.ndarray, target: np.ndarray, rounds: int = REFIT_ROUNDS) -> np.ndarray:
    """The (S, a, b) joint (G × A × B floats) fitted to the pair's `target` (A × B, ≥ 0) and
    to `current`'s (S, a) and (S, b) margins, which it meets (see the module docstring)."""
    rows, cols = current.sum(axis=2), current.sum(axis=1)
    sizes = rows.sum(axis=1)
    values = rows[:, :, None] * cols[:, None, :]
    values /= np.where(sizes > 0, sizes, 1.0)[:, None, None]
    for _ in range(rounds):
        _scale(values, target, 0)
        _scale(values, rows, 2)
        _scale(values, cols, 1)
    for _ in range(rounds):
        _scale(values, rows, 2)
        _scale(values, cols, 1)
        if np.abs(values.sum(axis=2) - rows).max(initial=0.0) <= RAKE_TOL * max(sizes.sum(), 1):
            break
    fitted: np.ndarray = values
    return fitted


def redraw(
    schema: Schema,
    out: dict[str, np.ndarray],
    pair: tuple[str, str],
    table: np.ndarray,
    given: frozenset[str],
    rng: np.random.Generator,
) -> None:
    """Redraw column pair[1] of the records `out` given `given` and the pair's noisy `table`
    (pair[0] × pair[1] cells), in place (see the module docstring)."""
    a, b = pair
    rows = out[a].size
    width_a, width_b = schema[a].size, schema[b].size
    key = reduce_key(schema, given)
    if key:
        _, groups = np.unique(cell_index(schema, out, key, rows), return_inverse=True)
        groups = groups.astype(np.int64).ravel()
    else:
        groups = np.zeros(rows, dtype=np.int64)
    count = int(groups.max(initial=-1)) + 1
    a_codes, b_codes = out[a].astype(np.int64), out[b].astype(np.int64)
    row_key = groups * width_a + a_codes
    current = np.bincount(row_key * width_b + b_codes, minlength=count * width_a * width_b)
    current = current.reshape(count, width_a, width_b).astype(np.float64)
    target = np.maximum(table.astype(np.float64), 0.0) + 1.0
    target *= rows / target.sum()
    values = fit_given(current, target)
    whole = np.empty(values.shape, dtype=np.int64)
    row_sums, col_sums = current.sum(axis=2), current.sum(axis=1)
    for group in range(count):
        whole[group] = round_two_way(values[group], row_sums[group], col_sums[group])
    cells = np.repeat(np.arange(whole.size, dtype=np.int64), whole.ravel())
    others = strata(schema, out, [n for n in out if n not in given and n not in pair])
    new = hand_out(row_key, cells % width_b, cells // width_b, rng, others)
    kept = count * width_b
    before = np.bincount(groups * width_b + b_codes, minlength=kept)
    if not np.array_equal(np.bincount(groups * width_b + new, minlength=kept), before):
        raise InternalError("a redraw moved a column's joint with the columns it is given")
    out[b] = new.astype(CODE_TYPE)
