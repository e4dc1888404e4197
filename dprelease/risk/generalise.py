"""CONFIDENTIAL: which generalisations of the quasi-identifiers reach a chosen k, and what
each costs in detail.

Each QI gets a ladder of coarsenings from the plan's own public structure: a geography column
climbs its `parent` hierarchy (county → state → …), a numeric column goes from its raw values to
the plan's bins and then to ever wider bins (neighbouring bins merged in pairs), and every
ladder ends in suppression (`*`, one group). The search walks the lattice of ladder levels
from the least general node upwards (Samarati's minimal generalisations): it keeps the nodes
that reach k whose every coarsening is then dominated, up to a bound on the nodes it tries.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from dprelease.data.columns import dictionary_parts, float_values
from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn, NumericColumn
from dprelease.risk.classes import RiskInput, combine_codes

MAX_NODES = 400  # lattice nodes evaluated at most (each is one pass over the rows)
MAX_SUGGESTIONS = 5


@dataclass(frozen=True)
class Level:
    """One rung of a ladder: a name for people and each row's group code."""

    name: str
    codes: np.ndarray = field(repr=False)
    groups: int


@dataclass(frozen=True)
class Ladder:
    column: str
    levels: tuple[Level, ...]  # from the raw values (0) to suppression (last)


@dataclass(frozen=True)
class Suggestion:
    """One generalisation that reaches k: a level per QI and what it costs.

    `precision_loss` is Sweeney's 1 − Prec: the mean over QIs of level/height (0 = raw,
    1 = all suppressed). `mean_class_size` is the size of the class an average record sits in
    (Σ size² / rows; the discernibility cost per record).
    """

    levels: dict[str, str]
    k: int
    classes: int
    precision_loss: float
    mean_class_size: float
    groups: dict[str, int]


def _merged_bins(edges: Sequence[float], values: np.ndarray, name: str) -> list[Level]:
    """The plan's bins, then neighbours merged in pairs until two bins are left."""
    levels = []
    current = list(edges)
    while len(current) >= 3:
        column = NumericColumn(name, tuple(current))
        codes, _ = column.codes_for_values(values)
        codes = np.where(codes < 0, column.size, codes).astype(np.int64)  # missing: own group
        label = f"bins {column.labels[0]} … {column.labels[-1]} ({column.size})"
        levels.append(Level(label, codes, column.size + 1))
        if len(current) == 3:
            break
        current = current[::2] if (len(current) - 1) % 2 == 0 else [*current[::2], current[-1]]
    return levels


def _parent_levels(column: CategoricalColumn, plan: Plan, texts: np.ndarray) -> list[Level]:
    """Climb the geography hierarchy: each parent level maps the child's labels up."""
    levels = []
    current: CategoricalColumn | None = column
    labels = texts
    while current is not None and current.parent is not None and current.parent_map:
        mapping = current.parent_map
        labels = np.array([mapping.get(str(t), "(other)") for t in labels.tolist()], dtype=object)
        uniques, codes = np.unique(labels.astype(str), return_inverse=True)
        levels.append(Level(current.parent, codes.astype(np.int64), len(uniques)))
        parent = plan.schema[current.parent]
        current = parent if isinstance(parent, CategoricalColumn) else None
    return levels


def ladder(table: pa.Table, data: RiskInput, name: str, plan: Plan | None) -> Ladder:
    raw = next(c for c in data.qi if c.name == name)
    levels = [Level("as recorded", raw.codes, len(raw.labels))]
    if plan is not None and name in plan.schema:
        column = plan.schema[name]
        if isinstance(column, NumericColumn):
            values = float_values(table.column(name), name)
            levels += _merged_bins(column.edges, values, name)
        elif column.parent is not None:
            texts, indices = dictionary_parts(table.column(name), name)
            as_text = np.array([*texts, None], dtype=object)[indices]
            levels += _parent_levels(column, plan, as_text)
    levels.append(Level("* (suppressed)", np.zeros(data.rows, np.int64), 1))
    return Ladder(name, tuple(levels))


def _evaluate(ladders: Sequence[Ladder], node: tuple[int, ...], rows: int) -> Suggestion:
    chosen = [lad.levels[i] for lad, i in zip(ladders, node, strict=True)]
    if math.prod(level.groups for level in chosen) <= 4 * rows + 1_000_000:
        key = np.zeros(rows, np.int64)  # one mixed-radix key, counted by bincount
        for level in chosen:
            key = key * level.groups + level.codes
        sizes = np.bincount(key)
        sizes = sizes[sizes > 0]
    else:
        ids, count = combine_codes([level.codes for level in chosen])
        sizes = np.bincount(ids, minlength=count)
    count = len(sizes)
    heights = [len(lad.levels) - 1 for lad in ladders]
    return Suggestion(
        levels={lad.column: lad.levels[i].name for lad, i in zip(ladders, node, strict=True)},
        k=int(sizes.min()),
        classes=count,
        precision_loss=float(np.mean([i / h for i, h in zip(node, heights, strict=True)])),
        mean_class_size=float((sizes.astype(np.float64) ** 2).sum() / rows),
        groups={lad.column: lad.levels[i].groups for lad, i in zip(ladders, node, strict=True)},
    )


def suggest_generalisations(
    table: pa.Table, data: RiskInput, k: int, plan: Plan | None = None
) -> tuple[list[Suggestion], int]:
    """Minimal generalisations that reach `k` (cheapest detail loss first), and how many
    lattice nodes were tried. Empty when none was found within MAX_NODES."""
    ladders = [ladder(table, data, column.name, plan) for column in data.qi]
    heights = [len(lad.levels) - 1 for lad in ladders]
    found: list[tuple[tuple[int, ...], Suggestion]] = []
    tried = 0
    for total in range(sum(heights) + 1):
        nodes = [
            node
            for node in itertools.product(*(range(h + 1) for h in heights))
            if sum(node) == total
            and not any(all(a >= b for a, b in zip(node, f, strict=True)) for f, _ in found)
        ]
        for node in nodes:
            if tried >= MAX_NODES or len(found) >= MAX_SUGGESTIONS:
                break
            tried += 1
            result = _evaluate(ladders, node, data.rows)
            if result.k >= k:
                found.append((node, result))
        if tried >= MAX_NODES or len(found) >= MAX_SUGGESTIONS:
            break
    suggestions = sorted((s for _, s in found), key=lambda s: (s.precision_loss, s.classes * -1))
    return suggestions, tried


def detail_kept(suggestion: Suggestion, ladders_groups: dict[str, int]) -> float:
    """Share of the QI space's log-detail kept: Σ log(groups) / Σ log(raw groups)."""
    raw = sum(math.log(g) for g in ladders_groups.values() if g > 1)
    kept = sum(math.log(g) for g in suggestion.groups.values() if g > 1)
    return kept / raw if raw else 1.0
