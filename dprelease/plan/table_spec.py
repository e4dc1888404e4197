"""Tables of counts: which columns a table crosses, its cells, and its sensitivity.

A table's cells are the cross product of its columns' domains, in domain order (the last
column varies fastest), empty cells included; `by: []` is the grand total, one cell.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from dprelease.errors import PlanError, quote
from dprelease.limits import (
    DELTA_LIMIT,
    EPSILON_LIMIT,
    MAX_ROWS_PER_UNIT,
    RHO_LIMIT,
    TARGET_LIMIT,
    delta_limit_message,
)
from dprelease.plan.schema import Schema
from dprelease.plan.survey_weight import SurveyWeight

Neighbors = Literal["add_remove", "replace"]
TABLE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


def check_budget_number(value: float, what: str, upper: float | None = None) -> None:
    """A budget number must be finite and positive (and at most `upper` when given)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PlanError(f"{what} must be a number, got {quote(value)}.")
    if value <= 0 or (
        isinstance(value, float) and not math.isfinite(value)
    ):  # a huge int is finite
        raise PlanError(f"{what} must be a finite number greater than 0, got {quote(value)}.")
    if upper is not None and value > upper:
        raise PlanError(
            f"{what} = {quote(value)} is too large to be meaningful; use a value above 0 and at "
            f"most {upper:g}."
        )


def check_epsilon(value: float, what: str) -> None:
    """ε must be finite, above 0 and at most EPSILON_LIMIT: beyond it a guarantee means nothing.
    The plan's parser and the dashboard's boxes both ask this one check."""
    check_budget_number(value, what, upper=EPSILON_LIMIT)


def check_rho(value: float, what: str) -> None:
    """ρ (zCDP) must be finite, above 0 and at most RHO_LIMIT."""
    check_budget_number(value, what, upper=RHO_LIMIT)


def check_delta(value: float, what: str) -> None:
    """δ must lie in (0, DELTA_LIMIT]: above it the guarantee fails too often to mean anything."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PlanError(f"{what} must be a number, got {quote(value)}.")
    if not math.isfinite(value) or not 0 < value <= DELTA_LIMIT:
        raise PlanError(delta_limit_message(what, value))


@dataclass(frozen=True)
class Unit:
    """The privacy unit: one row (a person), or all rows sharing an id, capped at max_rows."""

    kind: Literal["row", "id"] = "row"
    column: str | None = None
    max_rows: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("row", "id"):
            raise PlanError(f"unit.kind must be 'row' or 'id', got {quote(self.kind)}.")
        if self.kind == "row" and (self.column is not None or self.max_rows != 1):
            raise PlanError("unit.kind 'row' takes no column or max_rows; use kind: id.")
        if self.column is not None and not isinstance(self.column, str):
            raise PlanError(f"unit.column must be a column name, got {quote(self.column)}.")
        if self.kind == "id" and not self.column:
            raise PlanError("unit.kind 'id' needs `column`: the column that identifies a unit.")
        if isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int):
            raise PlanError(f"unit.max_rows must be a whole number, got {quote(self.max_rows)}.")
        if not 1 <= self.max_rows <= MAX_ROWS_PER_UNIT:
            raise PlanError(f"unit.max_rows must be between 1 and 10000, got {self.max_rows}.")


@dataclass(frozen=True)
class Sensitivity:
    """How much one table of counts can change between neighbouring data sets.

    Kept exact: L1 is an integer, L2 is given by its square (2·m² under `replace`).
    """

    l1: int
    l2_squared: int

    @property
    def l2(self) -> float:
        return math.sqrt(self.l2_squared)


def scaled(sens: Sensitivity, factor: int) -> Sensitivity:
    """A sensitivity `factor` times as large (a weighted table's: factor W, issue 37.8)."""
    return Sensitivity(l1=sens.l1 * factor, l2_squared=sens.l2_squared * factor * factor)


def table_sensitivity(spec: TableSpec, unit: Unit, neighbors: Neighbors) -> Sensitivity:
    """One table's: a count table's `sensitivity`, W times that for a weighted table."""
    return scaled(sensitivity(unit, neighbors), spec.sensitivity_factor)


def sensitivity(unit: Unit, neighbors: Neighbors) -> Sensitivity:
    """L1 = L2 = max_rows under add_remove; under replace L1 doubles and L2 grows by √2."""
    rows = unit.max_rows
    if neighbors == "add_remove":
        return Sensitivity(l1=rows, l2_squared=rows * rows)
    if neighbors == "replace":
        return Sensitivity(l1=2 * rows, l2_squared=2 * rows * rows)
    raise PlanError(f"neighbors must be 'add_remove' or 'replace', got {quote(neighbors)}.")


@dataclass(frozen=True)
class Target:
    """An accuracy target: per-cell margin of error, or for all cells of the table at once."""

    moe: float | None = None
    moe_table: float | None = None

    def __post_init__(self) -> None:
        if (self.moe is None) == (self.moe_table is None):
            raise PlanError("A target gives exactly one of `moe` or `moe_table`.")
        check_budget_number(self.goal, "target margin of error", upper=TARGET_LIMIT)

    @property
    def goal(self) -> float:
        """The margin of error asked for (per cell, or for the whole table)."""
        for value in (self.moe, self.moe_table):
            if value is not None:
                return value
        raise PlanError("A target gives exactly one of `moe` or `moe_table`.")

    def alpha(self, alpha: float, cells: int) -> float:
        """The per-cell tail probability the goal is held at (union bound for the table)."""
        return alpha / cells if self.moe_table is not None else alpha


@dataclass(frozen=True)
class TableSpec:
    """One released table: a histogram (one column), a marginal (several) or the total (none)."""

    name: str
    by: tuple[str, ...]
    weight: float = 1.0
    epsilon: float | None = None  # locked budget (pure, approx, advanced; zcdp: ρ = ε²/2)
    rho: float | None = None  # locked budget (zcdp)
    delta: float | None = None  # locked δ share (approx)
    target: Target | None = None
    invariant: bool = False  # exact counts, no noise, outside the DP guarantee (issue 27)
    survey_weight: SurveyWeight | None = None  # weighted cell totals (issue 37.8)

    def __post_init__(self) -> None:
        where = f"Table {quote(self.name)}"
        if not isinstance(self.invariant, bool):
            raise PlanError(
                f"{where}: invariant must be true or false, got {quote(self.invariant)}."
            )
        if not isinstance(self.name, str) or not TABLE_NAME.match(self.name):
            raise PlanError(
                f"Table name {quote(self.name)} is not allowed: use letters, digits, '_', '-' "
                "or '.' (it becomes a file name), at most 100 characters."
            )
        if len(set(self.by)) != len(self.by):
            raise PlanError(f"{where} names a column twice in `by`.")
        if (
            not isinstance(self.weight, int | float)
            or isinstance(self.weight, bool)
            or not math.isfinite(self.weight)
            or self.weight < 0
        ):
            raise PlanError(
                f"{where}: weight must be a finite number ≥ 0, got {quote(self.weight)}."
            )
        if self.epsilon is not None:
            check_epsilon(self.epsilon, f"{where}: epsilon")
        if self.rho is not None:
            check_rho(self.rho, f"{where}: rho")
        if self.epsilon is not None and self.rho is not None:
            raise PlanError(f"{where}: lock either epsilon or rho, not both.")
        if self.delta is not None:
            check_delta(self.delta, f"{where}: delta")
        if self.survey_weight is not None and self.invariant:
            raise PlanError(
                f"{where}: an invariant table holds exact counts; it cannot have a survey_weight."
            )

    @property
    def sensitivity_factor(self) -> int:
        """How many times a count table's sensitivity this table has: W when weighted."""
        return 1 if self.survey_weight is None else self.survey_weight.hi

    @property
    def locked(self) -> bool:
        return self.epsilon is not None or self.rho is not None

    def shape(self, schema: Schema) -> tuple[int, ...]:
        return tuple(schema[name].size for name in self.by)

    def cells(self, schema: Schema) -> int:
        return math.prod(self.shape(schema))

    def cell_labels(self, schema: Schema) -> Iterator[tuple[str, ...]]:
        """The labels of every cell, in domain order (last column fastest)."""
        return itertools.product(*(schema[name].labels for name in self.by))
