"""Synthetic microdata from the released tables: the model (`junction`), its integer clique
tables (`fit`), the records (`records`), and how far each published table is from them.

`synthesize` reads the plan (public) and the post-processed tables, which are computed from
the noisy measurements alone: never the data. The published tables are then the tabulations
of these records (`Microdata.tabulate`), so that they are whole, non-negative and consistent
across every table and every level of the hierarchy by construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dprelease.plan.model import Plan
from dprelease.plan.schema import LABEL_SUFFIX, Schema
from dprelease.plan.subtables import Key, cell_map, closure
from dprelease.synthetic.fit import fit_cliques
from dprelease.synthetic.join import place_new_columns
from dprelease.synthetic.junction import JunctionTree, check_model, microdata_columns
from dprelease.synthetic.measure import ShareDraw, SynthesisNoise, measure_one_ways
from dprelease.synthetic.records import CODE_TYPE, build_records, cell_index
from dprelease.synthetic.rounds import run_rounds


@dataclass(frozen=True)
class Mismatch:
    """A published table whose tabulation differs from its consistent estimate: in how many
    cells, by how much at most, and by how much in all (absolute differences)."""

    table: str
    cells: int
    largest: int
    total: int

    def to_dict(self) -> dict[str, int | str]:
        return {"table": self.table, "cells": self.cells, "largest": self.largest,
                "total": self.total}  # fmt: skip


@dataclass(frozen=True)
class Microdata:
    """One row per synthetic person: codes of `columns` (int32, rows × columns)."""

    columns: tuple[str, ...]
    codes: np.ndarray
    cliques: tuple[Key, ...]
    exact: bool  # the model's cliques are published tables: every cell can be matched
    mismatches: tuple[Mismatch, ...] = ()
    # issue 38.6, with a synthesis share: the columns it measured, the pairs it chose
    measured_columns: tuple[str, ...] = ()
    extra_pairs: tuple[tuple[str, str], ...] = ()

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])

    def tabulate(self, schema: Schema, by: tuple[str, ...]) -> np.ndarray:
        """The counts of a table over `by` (domain order, C order), from the records."""
        columns = {name: self.codes[:, i] for i, name in enumerate(self.columns)}
        index = cell_index(schema, columns, by, self.rows)
        cells = int(np.prod([schema[name].size for name in by], dtype=np.int64))
        counts: np.ndarray = np.bincount(index, minlength=cells).astype(np.int64)
        return counts


def value_texts(schema: Schema, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """The microdata's columns for one plan column, each (header, text of every code): the
    code the tables use (a category, or a bin `[a, b)`), then `C_label` with the plan's labels
    where it gives some (a bin's label, a code's codebook label; "" for a code without)."""
    column = schema[name]
    codes = tuple(column.labels)
    out = [(name, codes)]
    if column.value_labels:
        out.append((name + LABEL_SUFFIX, tuple(column.label_of(code) for code in codes)))
    return out


def _mismatches(
    plan: Plan, microdata: Microdata, released: Mapping[str, np.ndarray]
) -> tuple[Mismatch, ...]:
    found = []
    for spec in plan.tables:
        difference = np.abs(microdata.tabulate(plan.schema, spec.by) - released[spec.name])
        if difference.any():
            found.append(
                Mismatch(
                    spec.name,
                    int(np.count_nonzero(difference)),
                    int(difference.max()),
                    round(float(difference.sum())),
                )
            )
    return tuple(found)


def synthesize(
    plan: Plan,
    released_counts: Mapping[str, np.ndarray],
    rng: np.random.Generator | None = None,
) -> Microdata:
    """Records whose tabulations match the released tables (exactly when the tables form no
    cycle; otherwise as closely as the model's rounding allows, reported in `mismatches`).

    `released_counts`: every count table of the plan after consistent, non-negative, integer
    post-processing (a function of the noisy measurements only)."""
    generator = rng or np.random.default_rng()
    tree = check_model(plan)
    tables = fit_cliques(plan, tree, released_counts, generator)
    names = microdata_columns(plan)
    codes = build_records(plan.schema, tree, tables, names, generator)
    microdata = Microdata(names, codes, tuple(n.key for n in tree.nodes), tree.exact)
    return Microdata(
        names, codes, microdata.cliques, tree.exact, _mismatches(plan, microdata, released_counts)
    )


def synthesize_with_share(
    plan: Plan,
    budget: ShareDraw | None,
    released_counts: Mapping[str, np.ndarray],
    counted: Mapping[str, np.ndarray],
    noise: SynthesisNoise,
    rng: np.random.Generator | None = None,
) -> Microdata:
    """`synthesize`'s records, then with a synthesis share's `budget` (issue 38.6) every
    declared column, then the rounds' privately chosen, measured pairs (`rounds`).
    `counted` holds the true counts of the synthesis tables (CONFIDENTIAL, read by `measure`
    alone)."""
    generator = rng or np.random.default_rng()
    if budget is not None and not microdata_columns(plan):  # a grand total alone: no column yet
        total = round(float(next(iter(released_counts.values())).sum()))
        base = Microdata((), np.empty((total, 0), dtype=CODE_TYPE), (), True)
    else:
        base = synthesize(plan, released_counts, generator)
    if budget is None:
        return base
    columns = {name: base.codes[:, i] for i, name in enumerate(base.columns)}
    margins = {n: base.tabulate(plan.schema, (n,)) for n in base.columns}
    one_ways = measure_one_ways(plan, budget, counted, margins, base.rows, noise, generator)
    joined = place_new_columns(plan, columns, one_ways, base.rows, generator)
    chosen = run_rounds(plan, budget, counted, joined, noise, generator)
    names = budget.shape.columns
    codes = np.empty((base.rows, len(names)), dtype=CODE_TYPE)
    for position, name in enumerate(names):
        codes[:, position] = joined[name]
    pairs = tuple((p.first, p.second) for p, _ in chosen)
    return Microdata(
        names, codes, (*base.cliques, *pairs), base.exact, base.mismatches,
        tuple(one_ways), pairs,
    )  # fmt: skip


def model_tabulations(
    plan: Plan,
    released_counts: Mapping[str, np.ndarray],
    rng: np.random.Generator,
    tree: JunctionTree | None = None,
) -> dict[str, np.ndarray]:
    """What `synthesize`'s records would tabulate to, without making the records (the
    simulated accuracy runs it many times): each table summed from a clique that holds it."""
    tree = tree or check_model(plan)
    if tree.exact:
        return {name: np.asarray(values) for name, values in released_counts.items()}
    tables = fit_cliques(plan, tree, released_counts, rng)
    result = {}
    for spec in plan.tables:
        inside = closure(plan.schema, spec.by)
        at = next(i for i, node in enumerate(tree.nodes) if inside <= node.columns)
        node = tree.nodes[at]
        mapping = cell_map(plan.schema, node.key, spec.by)
        result[spec.name] = np.bincount(
            mapping, weights=tables[at], minlength=spec.cells(plan.schema)
        ).astype(np.int64)
    return result


__all__ = [
    "Microdata",
    "Mismatch",
    "model_tabulations",
    "synthesize",
    "synthesize_with_share",
    "value_texts",
]
