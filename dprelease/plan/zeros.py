"""Structural zeros and invariants: Census-style constraints a plan may state (issue 27).

A *structural zero* (`structural_zeros: [{COLUMN: [values], ...}, ...]`) says that a cell
matching every listed column is impossible by definition (a married five-year-old). A table
*contains* a zero when every column the zero names is one of the table's columns or an
ancestor of one (county cells inside a state zero); those cells are released as 0 with margin
0, and the consistency step holds them there, so every other table agrees.

An *invariant* table (`invariant: true`) publishes its exact counts, outside the DP guarantee,
as the Census did for state totals: it takes no budget and the consistency step holds it
fixed. It is never a default; the checks here refuse what makes no sense with it.

Values, masks and checks only: public plan structure, never data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dprelease.errors import PlanError, quote
from dprelease.plan.schema import CategoricalColumn, Schema
from dprelease.plan.subtables import (
    ancestors,
    cell_map,
    closure,
    determines,
    partial_columns,
    reduce_key,
)
from dprelease.plan.values_text import format_number, is_number

if TYPE_CHECKING:
    from dprelease.plan.table_spec import TableSpec

MASK_LIMIT = 50_000_000  # cells of one table's zero mask (bools): far above MAX_CELLS


@dataclass(frozen=True)
class StructuralZero:
    """Cells matching every listed column's values are impossible: (column, values) pairs."""

    values: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.values)

    def to_dict(self) -> dict[str, list[str]]:
        """The zero as the plan writes it."""
        return {name: list(values) for name, values in self.values}

    def describe(self) -> str:
        """One line for people: "age in [0, 15) and marital in Married, Widowed"."""
        return " and ".join(f"{name} in {', '.join(values)}" for name, values in self.values)


def parse_structural_zeros(raw: object) -> tuple[StructuralZero, ...]:
    """The plan's `structural_zeros:` list (values as their text, as cells are labelled)."""
    if raw is None:
        return ()
    rule = "structural_zeros must be a list of mappings {column: [values]}, e.g. "
    example = "[{age: ['[0, 15)'], marital: [Married]}]."
    if not isinstance(raw, list):
        raise PlanError(rule + example)
    zeros = []
    for index, item in enumerate(raw):
        where = f"structural_zeros[{index}]"
        if not isinstance(item, Mapping) or not item:
            raise PlanError(f"{where} must be a mapping of columns to lists of values.")
        pairs = []
        for column, values in item.items():
            listed = values if isinstance(values, list) else [values]
            if not listed or not all(isinstance(v, str) or is_number(v) for v in listed):
                raise PlanError(
                    f"{where}: column {quote(column)} needs a non-empty list of values "
                    "(text or numbers)."
                )
            texts = tuple(
                dict.fromkeys(v if isinstance(v, str) else format_number(v) for v in listed)
            )
            pairs.append((str(column), texts))
        zeros.append(StructuralZero(tuple(pairs)))
    return tuple(zeros)


def zero_codes(schema: Schema, zero: StructuralZero) -> dict[str, frozenset[int]]:
    """Each column's codes the zero names (a value may be a code, or a bin's label)."""
    out = {}
    for name, values in zero.values:
        column = schema[name]
        index = {label: code for code, label in enumerate(column.labels)}
        for code, shown in enumerate(getattr(column, "bin_labels", None) or ()):
            index.setdefault(shown, code)
        out[name] = frozenset(index[v] for v in values if v in index)
    return out


def zero_problems(schema: Schema, zeros: Sequence[StructuralZero]) -> list[str]:
    """Zeros naming a column the plan does not define, or a value outside its domain."""
    problems = []
    for index, zero in enumerate(zeros):
        where = f"structural_zeros[{index}]"
        for name, values in zero.values:
            if name not in schema:
                problems.append(
                    f"{where} names column {quote(name)}, which the plan does not define "
                    f"(defined: {', '.join(schema.names) or 'none'})."
                )
                continue
            labels = set(schema[name].labels) | set(getattr(schema[name], "bin_labels", None) or ())
            unknown = [v for v in values if v not in labels]
            if unknown:
                allowed = ", ".join(schema[name].labels[:10])
                more = ", …" if schema[name].size > 10 else ""
                problems.append(
                    f"{where}: {quote(unknown[0])} is not a value of column {quote(name)} "
                    f"(allowed: {allowed}{more})."
                )
    return problems


def _codes_through(schema: Schema, child: str, ancestor: str, wanted: frozenset[int]) -> set[int]:
    """The codes of `child` whose ancestor at the `ancestor` level is one of `wanted`."""
    column = schema[child]
    if not isinstance(column, CategoricalColumn):
        return set()
    current = {code: label for code, label in enumerate(column.labels)}
    step: CategoricalColumn = column
    while step.name != ancestor:
        parent = schema[step.parent or ""]
        parent_map = step.parent_map or {}
        current = {code: parent_map.get(label, "") for code, label in current.items()}
        if not isinstance(parent, CategoricalColumn):
            return set()
        step = parent
    labels = {schema[ancestor].labels[code] for code in wanted}
    return {code for code, label in current.items() if label in labels}


def zero_mask(schema: Schema, zeros: Sequence[StructuralZero], by: Sequence[str]) -> np.ndarray:
    """For each cell of a table over `by` (C order), whether a structural zero makes it 0.

    A zero applies when each column it names is one of `by` or an ancestor of one; a zero
    naming a column the table does not carry leaves the table's cells alone (consistency then
    carries it through the sums of a table that does).
    """
    shape = tuple(schema[name].size for name in by)
    mask = np.zeros(shape, dtype=bool)
    for zero in zeros:
        allowed = _allowed(schema, zero, tuple(by))
        if allowed is not None:
            mask[np.ix_(*allowed)] = True
    return mask.reshape(-1)


def _allowed(schema: Schema, zero: StructuralZero, by: tuple[str, ...]) -> list[np.ndarray] | None:
    """Per axis of `by`, the codes the zero covers; None when the table does not contain it."""
    codes = zero_codes(schema, zero)
    axes: list[set[int]] = [set(range(schema[name].size)) for name in by]
    for name, wanted in codes.items():
        if name in by:
            axes[by.index(name)] &= set(wanted)
            continue
        carrier = next((b for b in by if name in ancestors(schema, b)), None)
        if carrier is None:
            return None
        axes[by.index(carrier)] &= _codes_through(schema, carrier, name, wanted)
    return [np.asarray(sorted(axis), dtype=np.int64) for axis in axes]


def contains_zero(schema: Schema, zero: StructuralZero, by: Sequence[str]) -> bool:
    """Whether a table over `by` carries every column the zero names (itself or a child)."""
    return _allowed(schema, zero, tuple(by)) is not None


def constraint_problems(
    schema: Schema,
    zeros: Sequence[StructuralZero],
    tables: Sequence[TableSpec],
    invariants: Sequence[TableSpec],
    *,
    has_statistics: bool = False,
) -> list[str]:
    """What the plan's zeros and invariants cannot mean together with its tables (`tables`:
    the noisy count tables; `has_statistics`: the plan has noisy statistics too)."""
    problems = zero_problems(schema, zeros)
    known = [t for t in (*tables, *invariants) if all(c in schema for c in t.by)]
    if problems:
        return problems
    for spec in known:
        cells = spec.cells(schema)
        if cells > MASK_LIMIT or not zeros:
            continue
        mask = zero_mask(schema, zeros, spec.by)
        if mask.all():
            problems.append(
                f"The structural zeros make every cell of table {quote(spec.name)} zero; "
                "a zero must leave some cells possible (check its values)."
            )
        elif spec.invariant and mask.any():
            problems.append(
                f"Table {quote(spec.name)} is invariant (exact counts) and has structural-zero "
                "cells; exact counts and assumed zeros could disagree: drop one of them."
            )
    problems.extend(invariant_problems(schema, tables, invariants, has_statistics))
    derived = {  # refused above in other words: a sum of one invariant
        spec.name
        for spec, inv in itertools.product(tables, invariants)
        if all(c in schema for c in (*spec.by, *inv.by)) and determines(schema, inv.by, spec.by)
    }
    for spec in tables:
        if spec.name not in derived and fixed_exactly(schema, zeros, invariants, spec.by):
            problems.append(
                f"Table {quote(spec.name)} would be published exact under the name of a noisy "
                "table: the invariant tables, structural zeros and one-value columns fix its "
                "counts; mark it invariant as well, or remove it."
            )
    return problems


EXACT_CHECK_CELLS = 512  # joint cells the rank check handles (a dense SVD, ms): small plans


def fixed_exactly(
    schema: Schema,
    zeros: Sequence[StructuralZero],
    invariants: Sequence[TableSpec],
    by: tuple[str, ...],
) -> bool:
    """Whether some cell of a noisy table over `by` (not a structural zero) is a linear
    function of what the plan fixes exactly: the invariant tables' cells, the zero cells, and
    the one-value columns (issue 35: `a × c` with `c: {domain: [only]}` equals the invariant
    `a`; through a zero too). Decided by rank, on the joint table over every column involved:
    the zero cells are dropped (fixed at 0), and a cell is fixed when its row lies in the span
    of the invariants' rows. Plans with a partial column, or a joint larger than
    EXACT_CHECK_CELLS, are not checked (the sums-of rule in `invariant_problems` still is)."""
    if not invariants:
        return False  # zeros alone fix only zero cells, which are labelled 0 with margin 0
    names = {
        *by,
        *(c for inv in invariants for c in inv.by),
        *(c for z in zeros for c in z.columns),
    }
    if not all(name in schema for name in names) or partial_columns(schema, frozenset(names)):
        return False
    joint = reduce_key(schema, closure(schema, frozenset(names)))
    size = math.prod(schema[name].size for name in joint)
    if size > EXACT_CHECK_CELLS:
        return False
    free = ~zero_mask(schema, zeros, joint)  # the zero cells are fixed at 0: dropped

    def rows(target: tuple[str, ...]) -> np.ndarray:
        """One row per cell of the table over `target`: which joint cells it sums."""
        mapping = cell_map(schema, joint, reduce_key(schema, frozenset(target)))
        cells = math.prod(schema[name].size for name in reduce_key(schema, frozenset(target)))
        out = np.zeros((cells, size))
        out[mapping, np.arange(size)] = 1.0
        return out[:, free]

    fixed = np.vstack([rows(inv.by) for inv in invariants])
    _, singular, vt = np.linalg.svd(fixed, full_matrices=False)
    basis = vt[singular > 1e-9 * max(singular.max(initial=0.0), 1.0)]
    target = rows(by)
    target = target[target.any(axis=1)]  # cells that are not all zero cells
    if not len(target):  # every cell a zero cell: labelled 0 with margin 0, none noisy
        return False
    residual = target - (target @ basis.T) @ basis
    return bool((np.abs(residual).max(axis=1) < 1e-9).any())


def invariant_problems(
    schema: Schema,
    tables: Sequence[TableSpec],
    invariants: Sequence[TableSpec],
    has_statistics: bool = False,
) -> list[str]:
    """Invariants combined with what cannot go with them.

    A noisy table that an invariant table determines (its cells are sums of the invariant's,
    through the hierarchy or by summing columns out) would be published exact after
    consistency, under the name of a noisy table: refused. So are budgets, targets and weights
    on an invariant (it takes no budget), and a plan whose every table is invariant.
    """
    problems = []
    for spec in invariants:
        where = f"Table {quote(spec.name)} is invariant (exact, no noise)"
        if spec.locked or spec.delta is not None:
            problems.append(f"{where}: it takes no budget; remove its epsilon/rho/delta.")
        if spec.target is not None:
            problems.append(f"{where}: it has no error; remove its target.")
        if spec.weight != 1:
            problems.append(f"{where}: it takes no budget share; remove its weight.")
    if invariants and not tables and not has_statistics:
        problems.append(
            "Every table is invariant: the release would hold only exact counts and no "
            "differentially private table; make at least one table noisy."
        )
    for spec, inv in itertools.product(tables, invariants):
        if all(c in schema for c in (*spec.by, *inv.by)) and determines(schema, inv.by, spec.by):
            problems.append(
                f"Table {quote(spec.name)} is derived from the invariant table "
                f"{quote(inv.name)} (its cells are sums of it), so its counts would be exact "
                "too: mark it invariant as well, or remove it."
            )
    return problems


def zeros_to_list(zeros: Sequence[StructuralZero]) -> list[dict[str, list[str]]]:
    """The plan's `structural_zeros:` (also in a release's metadata)."""
    return [zero.to_dict() for zero in zeros]
