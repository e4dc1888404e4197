"""The factored domain that the strategy works on: attributes, their levels, and marginals.

A hierarchy chain (county → state) becomes ONE attribute whose domain is its finest column
and whose *levels* are coarsenings: level 0 is the finest column, then each coarser column the
tables use, and the last level is "summed out" (one group). A column without parent or child
is an attribute with two levels (itself, summed out). A table is then a `Marginal`: one level
per attribute. Marginal A *determines* B (B's cells are sums of A's) when A's level is finer
or equal on every attribute, and B keeps every *partial* attribute A keeps (a discovered
domain leaves rare values out: summing it out would lose those rows; see
`dprelease.plan.subtables`). So neither the downward closure nor a union derives a
table without the column from one with it.

Built from the plan's schema and the tables' `by` only: public, no data.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from dprelease.errors import PlanError, quote
from dprelease.plan.schema import Schema
from dprelease.plan.subtables import ancestor_codes, ancestors, is_partial

Marginal = tuple[int, ...]  # one level index per attribute


@dataclass(frozen=True)
class Attribute:
    """One factor of the domain: a column, or a hierarchy chain kept as one factor.

    `columns` lists the levels' columns finest first; `groups[k]` maps each finest code to its
    group at level k (level 0 is the identity); level `len(columns)` is the summed-out level.
    """

    columns: tuple[str, ...]
    size: int
    groups: tuple[tuple[int, ...], ...]
    partial: bool = False  # its finest level leaves rows out (a discovered domain)

    def __post_init__(self) -> None:
        if len(self.groups) != len(self.columns) or self.size < 1:
            raise PlanError(f"Attribute {quote(self.columns)} is malformed.")

    @property
    def name(self) -> str:
        return self.columns[0]

    @property
    def total_level(self) -> int:
        return len(self.columns)

    @property
    def is_plain(self) -> bool:
        """Two levels only (the column, summed out): the residual basis diagonalises it."""
        return len(self.columns) == 1

    def level_size(self, level: int) -> int:
        """Number of groups (cells) at a level: size, …, 1 for summed out."""
        return self._level_sizes[level]

    @cached_property
    def _level_sizes(self) -> tuple[int, ...]:  # asked thousands of times per allocation
        return (*(max(groups) + 1 for groups in self.groups), 1)


@dataclass(frozen=True)
class Domain:
    """The attributes a plan's tables use, in plan order of their finest column."""

    attributes: tuple[Attribute, ...]

    def marginal_cells(self, marginal: Marginal) -> int:
        return math.prod(
            a.level_size(level) for a, level in zip(self.attributes, marginal, strict=True)
        )

    def determines(self, finer: Marginal, coarser: Marginal) -> bool:
        return all(
            f <= c and not (a.partial and f < a.total_level == c)
            for a, f, c in zip(self.attributes, finer, coarser, strict=True)
        )

    def describe(self, marginal: Marginal) -> tuple[str, ...]:
        """The columns a marginal is by (its reduced key), in attribute order."""
        return tuple(
            a.columns[level]
            for a, level in zip(self.attributes, marginal, strict=True)
            if level < a.total_level
        )

    def marginal_of(self, by: Sequence[str]) -> Marginal:
        """The marginal of a table over `by` (a column and its ancestor: the finer wins)."""
        levels = []
        for attribute in self.attributes:
            used = [attribute.columns.index(c) for c in by if c in attribute.columns]
            levels.append(min(used) if used else attribute.total_level)
        unknown = [c for c in by if not any(c in a.columns for a in self.attributes)]
        if unknown:
            raise PlanError(f"Column {quote(unknown[0])} is not in the strategy's domain.")
        return tuple(levels)


def build_domain(schema: Schema, bys: Sequence[Sequence[str]]) -> Domain:
    """Group the columns the tables use (with their ancestors) into attributes.

    A chain may not branch among the used columns (county → state and puma → state both used):
    the product-domain model cannot express two children of one parent, so that is refused.
    Cached per schema and table set: an allocation asks six times (three accountants, each
    against the tables as listed), and a what-if on ε asks again.
    """
    key = (schema.key, tuple(tuple(by) for by in bys))
    with _DOMAINS_LOCK:  # the dashboard's sessions allocate on threads of their own
        domain = _DOMAINS.pop(key, None)
    if domain is None:
        domain = _build_domain(schema, bys)
    with _DOMAINS_LOCK:
        _DOMAINS[key] = domain  # the most recent last
        while len(_DOMAINS) > 32:
            del _DOMAINS[next(iter(_DOMAINS))]
    return domain


# public structure only (columns, domains, hierarchy), never data
_DOMAINS: dict[tuple[object, ...], Domain] = {}
_DOMAINS_LOCK = threading.Lock()


def _build_domain(schema: Schema, bys: Sequence[Sequence[str]]) -> Domain:
    used: set[str] = set()
    for by in bys:
        for name in by:
            used.add(name)
            used.update(ancestors(schema, name))
    children: dict[str, list[str]] = {}
    for name in used:
        chain = ancestors(schema, name)
        if chain:
            children.setdefault(chain[0], []).append(name)
    for parent, kids in children.items():
        if len(kids) > 1:
            raise PlanError(
                f"Columns {', '.join(sorted(kids))} share the parent {quote(parent)}; the "
                "strategy needs each hierarchy to be a chain. Use strategy: workload."
            )
    finest = [n for n in schema.names if n in used and n not in children]
    attributes = []
    for name in finest:
        columns = (name, *(a for a in ancestors(schema, name) if a in used))
        size = schema[name].size
        groups = [tuple(range(size))]
        groups += [tuple(int(x) for x in ancestor_codes(schema, name, c)) for c in columns[1:]]
        attributes.append(
            Attribute(
                columns=columns,
                size=size,
                groups=tuple(groups),
                partial=any(is_partial(schema, c) for c in columns),
            )
        )
    return Domain(attributes=tuple(attributes))


def downward_closure(domain: Domain, marginals: Sequence[Marginal]) -> tuple[Marginal, ...]:
    """Every marginal determined by one of `marginals` (coarsenings included), fine first."""
    seen: set[Marginal] = set()
    frontier = set(marginals)
    while frontier:
        seen |= frontier
        step = set()
        for m in frontier:
            for i, level in enumerate(m):
                coarser = (*m[:i], level + 1, *m[i + 1 :])
                if level < domain.attributes[i].total_level and domain.determines(m, coarser):
                    step.add(coarser)
        frontier = step - seen
    return tuple(sorted(seen, key=lambda m: (-domain.marginal_cells(m), m)))
