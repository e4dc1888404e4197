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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.limits import QUANTILE_MAX_CANDIDATES
from dprelease.plan.bounds import BOUND_LIMIT, parse_bounds, parse_number
from dprelease.plan.model_spec import (
    MODEL_METHODS,
    PcaSpec,
    RegressionSpec,
    model_label,
    model_rule,
    model_to_dict,
    parse_model,
)

QUANTILE_DENOMINATOR = 10_000  # q is a multiple of 1/10,000: OpenDP represents it exactly
MAX_CANDIDATES = QUANTILE_MAX_CANDIDATES
MAX_QUANTILES = 20

METHODS: dict[str, tuple[str, ...]] = {
    "quantile": ("exponential", "smooth_sensitivity"),
    "sum": ("clamped",),
    "mean": ("clamped", "sample_and_aggregate"),
    **MODEL_METHODS,  # regression (linear, logistic) and pca: `model_spec` (issue 28.4)
}
"""Each kind's methods, its default first (left out of a written plan); `dprelease.stats.
registry` has one object per pair."""


def _column(raw: object, what: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise PlanError(f"{what} must be a column name, got {quote(raw)}.")
    return raw


def quantile_fraction(q: float) -> Fraction:
    """q as the exact fraction k/10,000 (refused if q is not such a multiple, or not in (0, 1))."""
    scaled = round(q * QUANTILE_DENOMINATOR)
    if not 0 < scaled < QUANTILE_DENOMINATOR or abs(q * QUANTILE_DENOMINATOR - scaled) > 1e-6:
        raise PlanError(
            f"A quantile must lie strictly between 0 and 1 with at most 4 decimals "
            f"(e.g. 0.5, 0.25, 0.9), got {quote(q)}."
        )
    return Fraction(scaled, QUANTILE_DENOMINATOR)


@dataclass(frozen=True)
class QuantileSpec:
    """Quantiles q_1 < … < q_k of `column`, chosen from the public grid lo, lo+step, …, ≤ hi.

    `grid_step` is the plan's `resolution`: the distance between the candidates."""

    column: str
    quantiles: tuple[Fraction, ...]
    lo: float
    hi: float
    grid_step: float
    method: str = METHODS["quantile"][0]

    def __post_init__(self) -> None:
        _check_method("quantile", self.method)
        if not 1 <= len(self.quantiles) <= MAX_QUANTILES:
            raise PlanError(f"A quantile statistic takes 1 to {MAX_QUANTILES} quantiles.")
        if list(self.quantiles) != sorted(set(self.quantiles)):
            raise PlanError("The quantiles of one statistic must be distinct and increasing.")
        if not (self.grid_step > 0 and math.isfinite(self.grid_step)):
            raise PlanError(
                f"A quantile's resolution must be a number above 0, got {quote(self.grid_step)}."
            )
        if self.candidate_count > MAX_CANDIDATES:
            finest = (self.hi - self.lo) / (MAX_CANDIDATES - 1)
            unit = 10.0 ** (math.floor(math.log10(finest)) - 2)  # 3 digits, rounded up
            lo, hi = _bounds_out(self.lo, self.hi)
            raise PlanError(
                f"The quantile of column {quote(self.column)} would have more than "
                f"{MAX_CANDIDATES:,} candidate values at resolution {_text(self.grid_step)}; "
                f"give a resolution of at least {_text(math.ceil(finest / unit - 1e-9) * unit)} "
                f"for bounds [{lo}, {hi}]."
            )

    @property
    def kind(self) -> str:
        return "quantile"

    @property
    def candidate_count(self) -> int:
        """Candidates lo, lo + step, …, up to hi (hi itself when it is on the grid)."""
        return math.floor((self.hi - self.lo) / self.grid_step * (1 + 1e-12)) + 1


@dataclass(frozen=True)
class SumSpec:
    """Σ of `column` with each value clamped into [lo, hi] and rounded to `resolution`."""

    column: str
    lo: float
    hi: float
    resolution: Fraction

    def __post_init__(self) -> None:
        if self.resolution <= 0:
            raise PlanError(f"resolution must be positive, got {float(self.resolution)!r}.")
        if max(abs(self.lo), abs(self.hi)) / self.resolution > 2**40:
            raise PlanError(
                f"The bounds of column {quote(self.column)} are more than 2^40 resolution "
                "units from 0; raise `resolution`."
            )

    @property
    def kind(self) -> str:
        return "sum"

    @property
    def method(self) -> str:
        return METHODS["sum"][0]


@dataclass(frozen=True)
class MeanSpec:
    """Noisy sum / noisy count of `column`; `sum_share` of the budget goes to the sum."""

    total: SumSpec
    sum_share: Fraction = Fraction(1, 2)
    method: str = METHODS["mean"][0]

    def __post_init__(self) -> None:
        _check_method("mean", self.method)
        if not 0 < self.sum_share < 1:
            raise PlanError(f"sum_share must lie strictly between 0 and 1, got {self.sum_share}.")

    @property
    def kind(self) -> str:
        return "mean"

    @property
    def column(self) -> str:
        return self.total.column


WIDE_RANGE = (-BOUND_LIMIT, BOUND_LIMIT)  # a robust statistic's public range when none is given
DEFAULT_GROUPS = 200  # sample-and-aggregate: disjoint random groups per cell
MAX_GROUPS = 10_000
UNBOUNDED = {"quantile": "smooth_sensitivity", "mean": "sample_and_aggregate"}


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


StatSpec = QuantileSpec | SumSpec | MeanSpec | RobustSpec | RegressionSpec | PcaSpec


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


def _check_method(kind: str, method: object, what: str = "") -> None:
    if method not in METHODS[kind]:
        where = f"{what}.method" if what else f"A {kind}'s method"
        raise PlanError(
            f"{where} must be one of {', '.join(METHODS[kind])} for a {kind}, got {quote(method)}."
        )


def default_grid_step(lo: float, hi: float) -> float:
    whole = float(lo).is_integer() and float(hi).is_integer()
    return 1.0 if whole and hi - lo <= MAX_CANDIDATES - 1 else (hi - lo) / 1000


def default_resolution(lo: float, hi: float) -> Fraction:
    if float(lo).is_integer() and float(hi).is_integer():
        return Fraction(1)
    return Fraction(2) ** (math.floor(math.log2(hi - lo)) - 20)


def _allowed(raw: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise PlanError(f"{what} has unknown keys {unknown}; allowed: {sorted(allowed)}.")


def _sum_spec(raw: Mapping[str, Any], key: str, what: str) -> SumSpec:
    column = _column(raw[key], f"{what}.{key}")
    lo, hi = parse_bounds(raw.get("bounds"), f"{what}.bounds")
    resolution = raw.get("resolution")
    if resolution is None:
        unit = default_resolution(lo, hi)
    else:
        unit = Fraction(parse_number(resolution, f"{what}.resolution"))
    return SumSpec(column, lo, hi, unit)


def parse_stat(raw: object, table: str) -> StatSpec:
    """A table's `stat:` mapping as a spec; one-line PlanError naming the table otherwise."""
    what = f"Table {quote(table)} stat"
    if not isinstance(raw, Mapping):
        raise PlanError(f"{what} must be a mapping such as {{quantile: 0.5, column: age, ...}}.")
    kinds = [k for k in ("quantile", "sum", "mean", *MODEL_METHODS) if k in raw]
    if len(kinds) != 1:
        raise PlanError(f"{what} must have exactly one of quantile, sum, mean, regression, pca.")
    if kinds[0] in MODEL_METHODS:
        return parse_model(raw, what)
    kind = kinds[0]
    method = raw.get("method", METHODS[kind][0])
    _check_method(kind, method, what)
    if method != METHODS[kind][0]:
        return _robust_spec(raw, kind, what)
    if kind == "quantile":
        _allowed(raw, {"quantile", "column", "bounds", "resolution", "grid_step", "method"}, what)
        if "resolution" in raw and "grid_step" in raw:
            raise PlanError(f"{what} has resolution and grid_step (its older name); keep one.")
        qs = raw["quantile"] if isinstance(raw["quantile"], list) else [raw["quantile"]]
        fractions = tuple(quantile_fraction(parse_number(q, f"{what}.quantile")) for q in qs)
        lo, hi = parse_bounds(raw.get("bounds"), f"{what}.bounds")
        key = "grid_step" if "grid_step" in raw else "resolution"
        step = raw.get(key)
        grid_step = (
            default_grid_step(lo, hi) if step is None else parse_number(step, f"{what}.{key}")
        )
        return QuantileSpec(
            _column(raw.get("column"), f"{what}.column"), fractions, lo, hi, grid_step
        )
    if kind == "sum":
        _allowed(raw, {"sum", "bounds", "resolution"}, what)
        return _sum_spec(raw, "sum", what)
    _allowed(raw, {"mean", "bounds", "resolution", "sum_share", "method"}, what)
    share = raw.get("sum_share", 0.5)
    return MeanSpec(
        _sum_spec(raw, "mean", what), Fraction(parse_number(share, f"{what}.sum_share"))
    )


def _robust_spec(raw: Mapping[str, Any], kind: str, what: str) -> RobustSpec:
    """`method: smooth_sensitivity` (a quantile) or `sample_and_aggregate` (a mean)."""
    if kind == "quantile":
        _allowed(raw, {"quantile", "column", "method", "bounds", "resolution"}, what)
        qs = raw["quantile"] if isinstance(raw["quantile"], list) else [raw["quantile"]]
        fractions = tuple(quantile_fraction(parse_number(q, f"{what}.quantile")) for q in qs)
        column = _column(raw.get("column"), f"{what}.column")
    else:
        _allowed(raw, {"mean", "method", "bounds", "resolution", "groups"}, what)
        fractions = (Fraction(1, 2),)
        column = _column(raw["mean"], f"{what}.mean")
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


def parse_discover(raw: object, column: str) -> DiscoverSpec:
    """A column's `domain: {discover: {min_count: N}}`."""
    what = f"Column {quote(column)} domain.discover"
    if not isinstance(raw, Mapping) or set(raw) != {"min_count"}:
        raise PlanError(f"{what} must be {{min_count: N}} with a whole number N ≥ 1.")
    return DiscoverSpec(raw["min_count"])


def _bounds_out(lo: float, hi: float) -> list[int | float]:
    return [int(v) if float(v).is_integer() else v for v in (lo, hi)]


def stat_to_dict(spec: StatSpec) -> dict[str, Any]:
    """The plan's `stat:` mapping of a spec; `parse_stat(stat_to_dict(s))` gives `s` back."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_to_dict(spec)
    if isinstance(spec, RobustSpec):
        return _robust_to_dict(spec)
    if isinstance(spec, QuantileSpec):
        qs = [float(q) for q in spec.quantiles]
        out: dict[str, Any] = {
            "quantile": qs[0] if len(qs) == 1 else qs,
            "column": spec.column,
            "bounds": _bounds_out(spec.lo, spec.hi),
        }
        if spec.grid_step != default_grid_step(spec.lo, spec.hi):
            step = spec.grid_step
            out["resolution"] = int(step) if float(step).is_integer() else step
        return out
    total = spec.total if isinstance(spec, MeanSpec) else spec
    out = {spec.kind: total.column, "bounds": _bounds_out(total.lo, total.hi)}
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
        out["bounds"] = _bounds_out(spec.lo, spec.hi)
    if spec.resolution is not None:
        out["resolution"] = _bounds_out(spec.resolution, spec.resolution)[0]
    if spec.kind == "mean" and spec.groups != DEFAULT_GROUPS:
        out["groups"] = spec.groups
    return out


def stat_bounds(spec: StatSpec) -> tuple[float, float]:
    """The statistic's bounds [lo, hi] (a regression's or PCA's: of its main column)."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return spec.bounds[spec.columns.index(spec.column)]
    return (spec.total.lo, spec.total.hi) if isinstance(spec, MeanSpec) else (spec.lo, spec.hi)


def stat_resolution(spec: StatSpec) -> float:
    """A quantile's distance between candidates; a sum's or mean's fixed-point unit; what a
    robust statistic's value is rounded to (0: 6 significant digits; a regression's, a PCA's:
    none)."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return 0.0
    if isinstance(spec, RobustSpec):
        if spec.kind == "mean":
            return spec.resolution or default_grid_step(spec.lo, spec.hi)
        return spec.resolution or 0.0
    if isinstance(spec, QuantileSpec):
        return spec.grid_step
    return float((spec.total if isinstance(spec, MeanSpec) else spec).resolution)


def _text(value: float) -> str:
    """A public number as written in a plan: 200000, not 2e+05."""
    return str(int(value)) if float(value).is_integer() else f"{value:.10g}"


def _names(spec: StatSpec) -> str:
    if not isinstance(spec, QuantileSpec | RobustSpec) or spec.kind == "mean":
        return spec.kind
    return ", ".join(
        "median" if q == Fraction(1, 2) else f"{float(q):g}-quantile" for q in spec.quantiles
    )


def stat_label(spec: StatSpec) -> str:
    """A short public description, e.g. 'median of age in [0, 100]'."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_label(spec)
    lo, hi = _bounds_out(*stat_bounds(spec))
    if isinstance(spec, RobustSpec):
        how = spec.method.replace("_", "-")
        where = f" in [{lo}, {hi}]" if spec.bounded else ""
        return f"{_names(spec)} of {spec.column}{where} by {how}"
    if isinstance(spec, QuantileSpec):
        return f"{_names(spec)} of {spec.column} in [{lo}, {hi}]"
    return f"{spec.kind} of {spec.column} clamped to [{lo}, {hi}]"


def stat_rule(spec: StatSpec) -> str:
    """Which rows the statistic uses and what it does to their values (public: the rule, never
    how many rows it leaves out), e.g. 'median of PINCP over the rows where PINCP is a number
    …'."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_rule(spec)
    lo, hi = _bounds_out(*stat_bounds(spec))
    step = stat_resolution(spec)
    used = (
        f"{_names(spec)} of {spec.column} over the rows where {spec.column} is a number (a "
        "missing or non-numeric value leaves its row out of this statistic)"
    )
    if isinstance(spec, RobustSpec):
        rounded = f"a multiple of {_text(step)}" if step else "6 significant digits"
        outside = (
            f"a value below {lo} or above {hi} counts as that bound"
            if spec.bounded
            else "no value is clamped"
        )
        if spec.kind == "mean":
            return (
                f"{used}; {outside} (a wide public range, not a clamp on typical values); the "
                f"rows are split into {spec.groups} disjoint random groups and the released "
                "value is a private median of the groups' means, one of the candidates "
                f"{_text(lo)}, {_text(lo + step)}, … up to {_text(hi)}"
            )
        return f"{used}; {outside}; the released value is rounded to {rounded}"
    if isinstance(spec, QuantileSpec):
        last = spec.lo + step * (spec.candidate_count - 1)
        return (
            f"{used}; a value below {lo} or above {hi} counts as below or above every "
            "candidate, however far out it lies; the released value is one of the candidates "
            f"{_text(lo)}, {_text(lo + step)}, {_text(lo + 2 * step)}, … up to {_text(last)} "
            f"(resolution {_text(step)})"
        )
    rounded = f"clamped into [{lo}, {hi}] and rounded to a multiple of {_text(step)}"
    if isinstance(spec, MeanSpec):
        return f"{used}; values {rounded}; the mean's count is of the same rows"
    return f"{used}; values {rounded}"


def stat_columns(spec: StatSpec) -> tuple[str, ...]:
    """Every data column the statistic reads (a regression's x and y, a PCA's columns)."""
    return spec.columns if isinstance(spec, RegressionSpec | PcaSpec) else (spec.column,)
