"""A table's `stat:` and a column's `domain: {discover: ...}` as validated values.

Plan syntax (PLAN_AND_CLI.md §4):

    stat: {quantile: 0.5, column: age, bounds: [0, 100]}        # or quantile: [0.25, 0.5, 0.75]
    stat: {sum: income, bounds: [0, 500000]}
    stat: {mean: income, bounds: [0, 500000]}
    domain: {discover: {min_count: 20}}

Optional keys: `resolution` (quantile: the distance between its candidate values lo, lo + r,
…, ≤ hi, the only values it can release; default 1 when the bounds are whole numbers and at
most 10,000 apart, else (hi − lo)/1000; `grid_step` is its older name. Sum, mean: the
fixed-point unit values are rounded to, default 1 for whole-number bounds, else a power of two
near (hi − lo)/2²⁰), `sum_share` (mean: the part of its budget the sum gets, default 1/2).

Which rows a statistic uses (`stat_rule`): those whose value of its column is a number; a
missing or non-numeric value leaves the row out of that statistic. Values outside the bounds
are clamped into them (a quantile ranks them below or above every candidate, which comes to
the same: how far out a value lies does not matter). The data holder sees how many rows each
rule leaves out (`dprelease.data.coverage`); a release states the rule, never the count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.limits import AUTO_CELL_ROWS, MAX_CELL_ROWS
from dprelease.plan.bounds import BOUND_LIMIT, parse_bounds, parse_number
from dprelease.plan.model_spec import (
    MODEL_METHODS,
    PcaSpec,
    RegressionSpec,
    model_to_dict,
    parse_model,
)
from dprelease.plan.stat_kinds import AUTO, METHODS, STAT_KINDS, UNBOUNDED, check_method
from dprelease.plan.summary_spec import (
    MAX_QUANTILES,
    SUMMARY_PARSERS,
    MeanSpec,
    QuantileSpec,
    SumSpec,
    allowed_keys,
    bounds_out,
    column_name,
    default_grid_step,
    default_resolution,
    finest_grid_step,
    quantiles_of,
)

WIDE_RANGE = (-BOUND_LIMIT, BOUND_LIMIT)  # a robust statistic's public range when none is given
DEFAULT_GROUPS = 200  # sample-and-aggregate: disjoint random groups per cell
MAX_GROUPS = 10_000


@dataclass(frozen=True)
class RobustSpec:
    """A quantile by smooth sensitivity or a mean by sample-and-aggregate (issue 28.1): no
    clamping bounds, only a public range [lo, hi] the theory needs (by default the widest
    one, ±1e15), and an optional `resolution` the released value is rounded to (else 6
    significant digits). A mean's `groups`: how many disjoint random groups a cell's rows are
    split into (its quantiles are then the median of the group means)."""

    stat_kind: str  # quantile | mean
    column: str
    quantiles: tuple[Fraction, ...] = (Fraction(1, 2),)
    lo: float = WIDE_RANGE[0]
    hi: float = WIDE_RANGE[1]
    resolution: float | None = None
    groups: int = DEFAULT_GROUPS

    def __post_init__(self) -> None:
        if self.stat_kind not in UNBOUNDED:
            raise PlanError(f"Only a quantile or a mean has a method, got {quote(self.stat_kind)}.")
        if not 1 <= len(self.quantiles) <= MAX_QUANTILES:
            raise PlanError(f"A quantile statistic takes 1 to {MAX_QUANTILES} quantiles.")
        if list(self.quantiles) != sorted(set(self.quantiles)):
            raise PlanError("The quantiles of one statistic must be distinct and increasing.")
        if not self.lo < self.hi:
            raise PlanError(f"bounds must have lo < hi, got [{self.lo:g}, {self.hi:g}].")
        if self.resolution is not None and not (
            self.resolution > 0 and math.isfinite(self.resolution)
        ):
            raise PlanError(f"resolution must be a number above 0, got {quote(self.resolution)}.")
        groups = self.groups
        if isinstance(groups, bool) or not isinstance(groups, int) or not 2 <= groups <= MAX_GROUPS:
            raise PlanError(
                f"groups must be a whole number from 2 to {MAX_GROUPS:,}, got {quote(groups)}."
            )

    @property
    def kind(self) -> str:
        return self.stat_kind

    @property
    def method(self) -> str:
        return UNBOUNDED[self.stat_kind]

    @property
    def bounded(self) -> bool:
        """Whether the plan gave a public range (else the widest, ±1e15)."""
        return (self.lo, self.hi) != WIDE_RANGE


Candidate = QuantileSpec | MeanSpec | RobustSpec


@dataclass(frozen=True)
class AutoSpec:
    """`method: auto` (issue 38.3): a quantile or a mean by the method with the least expected
    error, chosen at allocation from public facts only (`dprelease.stats.auto_method`): the
    declared bounds, the resolution, the statistic's share of the budget, the privacy unit's
    rows, and `min_cell_rows`, a public lower bound on a cell's rows (a published count, never
    read from the data); without it a small cell of AUTO_CELL_ROWS rows, the conservative case.

    `candidates` holds one full spec per method, the default first: a quantile's exponential
    mechanism and smooth sensitivity over the same bounds and resolution; a mean's clamped sum
    over count (its `resolution`, `sum_share`) and sample and aggregate (its `groups`, its grid
    of candidate means at the default resolution)."""

    candidates: tuple[Candidate, ...]
    min_cell_rows: int | None = None
    # no `resolution` given: the exponential mechanism's grid is the finest the bounds allow
    # (its rounding gone; on data that crowd near the quantile, a finer grid is closer)
    finest_grid: bool = False

    def __post_init__(self) -> None:
        if len(self.candidates) < 2 or len({c.kind for c in self.candidates}) != 1:
            raise PlanError("method auto needs two or more methods of one statistic kind.")
        rows = self.min_cell_rows
        if rows is not None and (
            isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_CELL_ROWS
        ):
            raise PlanError(
                f"min_cell_rows must be a whole number from 1 to {MAX_CELL_ROWS:.0e} (a public "
                f"lower bound on a cell's rows), got {quote(rows)}."
            )

    @property
    def kind(self) -> str:
        return self.candidates[0].kind

    @property
    def method(self) -> str:
        return AUTO

    @property
    def column(self) -> str:
        return self.candidates[0].column

    @property
    def cell_rows(self) -> int:
        """The rows of the cell the expected errors are computed for (public)."""
        return self.min_cell_rows or AUTO_CELL_ROWS


StatSpec = QuantileSpec | SumSpec | MeanSpec | RobustSpec | AutoSpec | RegressionSpec | PcaSpec


@dataclass(frozen=True)
class DiscoverSpec:
    """`domain: {discover: {min_count: N}}`: the keys whose noisy count reaches the threshold."""

    min_count: int

    def __post_init__(self) -> None:
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int):
            raise PlanError(
                f"discover.min_count must be a whole number, got {quote(self.min_count)}."
            )
        if not 1 <= self.min_count <= 10**9:
            raise PlanError(f"discover.min_count must be between 1 and 1e9, got {self.min_count}.")


def parse_stat(raw: object, table: str) -> StatSpec:
    """A table's `stat:` mapping as a spec; one-line PlanError naming the table otherwise."""
    what = f"Table {quote(table)} stat"
    if not isinstance(raw, Mapping):
        raise PlanError(f"{what} must be a mapping such as {{quantile: 0.5, column: age, ...}}.")
    kinds = [k for k in STAT_KINDS if k in raw]
    if len(kinds) != 1:
        raise PlanError(f"{what} must have exactly one of {', '.join(STAT_KINDS)}.")
    kind = kinds[0]
    if kind in MODEL_METHODS:
        return parse_model(raw, what)
    method = raw.get("method", METHODS[kind][0])
    check_method(kind, method, what)
    if method == AUTO:
        return _auto_spec(raw, kind, what)
    if method != METHODS[kind][0]:
        return _robust_spec(raw, kind, what)
    return SUMMARY_PARSERS[kind](raw, what)


def _robust_spec(raw: Mapping[str, Any], kind: str, what: str) -> RobustSpec:
    """`method: smooth_sensitivity` (a quantile) or `sample_and_aggregate` (a mean)."""
    if kind == "quantile":
        allowed_keys(raw, {"quantile", "column", "method", "bounds", "resolution"}, what)
        fractions = quantiles_of(raw, what)
        column = column_name(raw.get("column"), f"{what}.column")
    else:
        allowed_keys(raw, {"mean", "method", "bounds", "resolution", "groups"}, what)
        fractions = (Fraction(1, 2),)
        column = column_name(raw["mean"], f"{what}.mean")
    if kind == "mean" and raw.get("bounds") is None:
        raise PlanError(
            f"{what}: sample_and_aggregate needs bounds, a wide public range [lo, hi] of the "
            "candidate means (e.g. [0, 10000000]); values are not clamped to it."
        )
    lo, hi = (
        WIDE_RANGE if raw.get("bounds") is None else parse_bounds(raw["bounds"], f"{what}.bounds")
    )
    step = raw.get("resolution")
    resolution = None if step is None else parse_number(step, f"{what}.resolution")
    if kind == "mean":  # the grid of candidate means: checked as a quantile's
        grid = default_grid_step(lo, hi) if resolution is None else resolution
        QuantileSpec(column, fractions, lo, hi, grid)
    groups = raw.get("groups", DEFAULT_GROUPS)
    if isinstance(groups, bool) or not isinstance(groups, int) or not 2 <= groups <= MAX_GROUPS:
        raise PlanError(
            f"{what}.groups must be a whole number from 2 to {MAX_GROUPS:,}, got {quote(groups)}."
        )
    return RobustSpec(kind, column, fractions, lo, hi, resolution, groups)


def _auto_spec(raw: Mapping[str, Any], kind: str, what: str) -> AutoSpec:
    """`method: auto`: the keys of every candidate method, bounds required (the expected
    errors are computed over them), and an optional public `min_cell_rows`."""
    if kind == "quantile":
        keys = {"quantile", "column", "method", "bounds", "resolution", "min_cell_rows"}
    else:
        keys = {"mean", "method", "bounds", "resolution", "sum_share", "groups", "min_cell_rows"}
    allowed_keys(raw, keys, what)
    if raw.get("bounds") is None:
        raise PlanError(
            f"{what}: method auto compares the methods' expected errors over the declared "
            "bounds; give bounds [lo, hi] (e.g. [0, 100])."
        )
    default = SUMMARY_PARSERS[kind](
        {k: v for k, v in raw.items() if k not in {"method", "min_cell_rows", "groups"}}, what
    )
    robust = {k: v for k, v in raw.items() if k not in {"min_cell_rows", "sum_share"}}
    if kind == "mean":  # `resolution` is the clamped sum's unit; the candidate means' grid: default
        robust.pop("resolution", None)
    if isinstance(default, SumSpec):  # a sum has no other method (METHODS)
        raise PlanError(f"{what}: a sum has no method auto.")
    finest = isinstance(default, QuantileSpec) and raw.get("resolution") is None
    if finest and isinstance(default, QuantileSpec):  # auto chooses the grid too (38.3)
        default = replace(default, grid_step=finest_grid_step(default.lo, default.hi))
    robust_spec = _robust_spec(robust, kind, what)
    return AutoSpec((default, robust_spec), raw.get("min_cell_rows"), finest_grid=finest)


def parse_discover(raw: object, column: str) -> DiscoverSpec:
    """A column's `domain: {discover: {min_count: N}}`."""
    what = f"Column {quote(column)} domain.discover"
    if not isinstance(raw, Mapping) or set(raw) != {"min_count"}:
        raise PlanError(f"{what} must be {{min_count: N}} with a whole number N ≥ 1.")
    return DiscoverSpec(raw["min_count"])


def stat_to_dict(spec: StatSpec) -> dict[str, Any]:
    """The plan's `stat:` mapping of a spec; `parse_stat(stat_to_dict(s))` gives `s` back."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_to_dict(spec)
    if isinstance(spec, RobustSpec):
        return _robust_to_dict(spec)
    if isinstance(spec, AutoSpec):
        return _auto_to_dict(spec)
    if isinstance(spec, QuantileSpec):
        qs = [float(q) for q in spec.quantiles]
        out: dict[str, Any] = {
            "quantile": qs[0] if len(qs) == 1 else qs,
            "column": spec.column,
            "bounds": bounds_out(spec.lo, spec.hi),
        }
        if spec.grid_step != default_grid_step(spec.lo, spec.hi):
            step = spec.grid_step
            out["resolution"] = int(step) if float(step).is_integer() else step
        return out
    total = spec.total if isinstance(spec, MeanSpec) else spec
    out = {spec.kind: total.column, "bounds": bounds_out(total.lo, total.hi)}
    if total.resolution != default_resolution(total.lo, total.hi):
        out["resolution"] = float(total.resolution)
    if isinstance(spec, MeanSpec) and spec.sum_share != Fraction(1, 2):
        out["sum_share"] = float(spec.sum_share)
    return out


def _robust_to_dict(spec: RobustSpec) -> dict[str, Any]:
    qs = [float(q) for q in spec.quantiles]
    out: dict[str, Any] = (
        {"quantile": qs[0] if len(qs) == 1 else qs, "column": spec.column}
        if spec.kind == "quantile"
        else {"mean": spec.column}
    )
    out["method"] = spec.method
    if spec.bounded:
        out["bounds"] = bounds_out(spec.lo, spec.hi)
    if spec.resolution is not None:
        out["resolution"] = bounds_out(spec.resolution, spec.resolution)[0]
    if spec.kind == "mean" and spec.groups != DEFAULT_GROUPS:
        out["groups"] = spec.groups
    return out


def _auto_to_dict(spec: AutoSpec) -> dict[str, Any]:
    out = {**stat_to_dict(spec.candidates[0]), "method": spec.method}
    if spec.finest_grid:  # chosen by auto, not given
        out.pop("resolution", None)
    robust = spec.candidates[1]
    if isinstance(robust, RobustSpec):
        if robust.resolution is not None:
            out["resolution"] = bounds_out(robust.resolution, robust.resolution)[0]
        if robust.groups != DEFAULT_GROUPS:
            out["groups"] = robust.groups
    if spec.min_cell_rows is not None:
        out["min_cell_rows"] = spec.min_cell_rows
    return out


def stat_bounds(spec: StatSpec) -> tuple[float, float]:
    """The statistic's bounds [lo, hi] (a regression's or PCA's: of its main column)."""
    if isinstance(spec, AutoSpec):
        return stat_bounds(spec.candidates[0])
    if isinstance(spec, RegressionSpec | PcaSpec):
        return spec.bounds[spec.columns.index(spec.column)]
    return (spec.total.lo, spec.total.hi) if isinstance(spec, MeanSpec) else (spec.lo, spec.hi)


def stat_resolution(spec: StatSpec) -> float:
    """A quantile's distance between candidates; a sum's or mean's fixed-point unit; what a
    robust statistic's value is rounded to (0: 6 significant digits; a regression's, a PCA's:
    none; `method: auto`: its default method's)."""
    if isinstance(spec, AutoSpec):
        return stat_resolution(spec.candidates[0])
    if isinstance(spec, RegressionSpec | PcaSpec):
        return 0.0
    if isinstance(spec, RobustSpec):
        if spec.kind == "mean":
            return spec.resolution or default_grid_step(spec.lo, spec.hi)
        return spec.resolution or 0.0
    if isinstance(spec, QuantileSpec):
        return spec.grid_step
    return float((spec.total if isinstance(spec, MeanSpec) else spec).resolution)


def stat_columns(spec: StatSpec) -> tuple[str, ...]:
    """Every data column the statistic reads (a regression's x and y, a PCA's columns)."""
    return spec.columns if isinstance(spec, RegressionSpec | PcaSpec) else (spec.column,)
