"""A summary statistic's spec (a quantile, a sum, a mean under its default method) and its
parser: what `stat: {quantile: …}`, `{sum: …}` and `{mean: …}` mean in a plan.

`dprelease.plan.stat_spec` parses every `stat:` and hands these kinds here; a robust method
(smooth sensitivity, sample and aggregate) and the models are its own and `model_spec`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.limits import QUANTILE_MAX_CANDIDATES
from dprelease.plan.bounds import parse_bounds, parse_number
from dprelease.plan.stat_kinds import METHODS, check_method
from dprelease.plan.values_text import public_number

QUANTILE_DENOMINATOR = 10_000  # q is a multiple of 1/10,000: OpenDP represents it exactly
MAX_CANDIDATES = QUANTILE_MAX_CANDIDATES
MAX_QUANTILES = 20


def column_name(raw: object, what: str) -> str:
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
        check_method("quantile", self.method)
        if not 1 <= len(self.quantiles) <= MAX_QUANTILES:
            raise PlanError(f"A quantile statistic takes 1 to {MAX_QUANTILES} quantiles.")
        if list(self.quantiles) != sorted(set(self.quantiles)):
            raise PlanError("The quantiles of one statistic must be distinct and increasing.")
        if not (self.grid_step > 0 and math.isfinite(self.grid_step)):
            raise PlanError(
                f"A quantile's resolution must be a number above 0, got {quote(self.grid_step)}."
            )
        if self.candidate_count > MAX_CANDIDATES:
            lo, hi = bounds_out(self.lo, self.hi)
            least = public_number(finest_grid_step(self.lo, self.hi))
            raise PlanError(
                f"The quantile of column {quote(self.column)} would have more than "
                f"{MAX_CANDIDATES:,} candidate values at resolution "
                f"{public_number(self.grid_step)}; give a resolution of at least {least} "
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
        check_method("mean", self.method)
        if not 0 < self.sum_share < 1:
            raise PlanError(f"sum_share must lie strictly between 0 and 1, got {self.sum_share}.")

    @property
    def kind(self) -> str:
        return "mean"

    @property
    def column(self) -> str:
        return self.total.column


def bounds_out(lo: float, hi: float) -> list[int | float]:
    return [int(v) if float(v).is_integer() else v for v in (lo, hi)]


def default_grid_step(lo: float, hi: float) -> float:
    whole = float(lo).is_integer() and float(hi).is_integer()
    return 1.0 if whole and hi - lo <= MAX_CANDIDATES - 1 else (hi - lo) / 1000


def finest_grid_step(lo: float, hi: float) -> float:
    """The finest resolution the bounds allow (at most MAX_CANDIDATES candidates), rounded up
    to 3 significant digits: 50 for [0, 500000]; 1 for whole bounds that fit."""
    whole = float(lo).is_integer() and float(hi).is_integer()
    if whole and hi - lo <= MAX_CANDIDATES - 1:
        return 1.0
    finest = (hi - lo) / (MAX_CANDIDATES - 1)
    unit = 10.0 ** (math.floor(math.log10(finest)) - 2)  # 3 digits, rounded up
    return float(math.ceil(finest / unit - 1e-9) * unit)


def default_resolution(lo: float, hi: float) -> Fraction:
    if float(lo).is_integer() and float(hi).is_integer():
        return Fraction(1)
    return Fraction(2) ** (math.floor(math.log2(hi - lo)) - 20)


def allowed_keys(raw: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise PlanError(f"{what} has unknown keys {unknown}; allowed: {sorted(allowed)}.")


def _sum_spec(raw: Mapping[str, Any], key: str, what: str) -> SumSpec:
    column = column_name(raw[key], f"{what}.{key}")
    lo, hi = parse_bounds(raw.get("bounds"), f"{what}.bounds")
    resolution = raw.get("resolution")
    if resolution is None:
        unit = default_resolution(lo, hi)
    else:
        unit = Fraction(parse_number(resolution, f"{what}.resolution"))
    return SumSpec(column, lo, hi, unit)


def _quantile_spec(raw: Mapping[str, Any], what: str) -> QuantileSpec:
    allowed_keys(raw, {"quantile", "column", "bounds", "resolution", "grid_step", "method"}, what)
    if "resolution" in raw and "grid_step" in raw:
        raise PlanError(f"{what} has resolution and grid_step (its older name); keep one.")
    lo, hi = parse_bounds(raw.get("bounds"), f"{what}.bounds")
    key = "grid_step" if "grid_step" in raw else "resolution"
    step = raw.get(key)
    grid_step = default_grid_step(lo, hi) if step is None else parse_number(step, f"{what}.{key}")
    column = column_name(raw.get("column"), f"{what}.column")
    return QuantileSpec(column, quantiles_of(raw, what), lo, hi, grid_step)


def quantiles_of(raw: Mapping[str, Any], what: str) -> tuple[Fraction, ...]:
    qs = raw["quantile"] if isinstance(raw["quantile"], list) else [raw["quantile"]]
    return tuple(quantile_fraction(parse_number(q, f"{what}.quantile")) for q in qs)


def _sum_stat(raw: Mapping[str, Any], what: str) -> SumSpec:
    allowed_keys(raw, {"sum", "bounds", "resolution"}, what)
    return _sum_spec(raw, "sum", what)


def _mean_spec(raw: Mapping[str, Any], what: str) -> MeanSpec:
    allowed_keys(raw, {"mean", "bounds", "resolution", "sum_share", "method"}, what)
    share = raw.get("sum_share", 0.5)
    return MeanSpec(
        _sum_spec(raw, "mean", what), Fraction(parse_number(share, f"{what}.sum_share"))
    )


SummarySpec = QuantileSpec | SumSpec | MeanSpec

SUMMARY_PARSERS: dict[str, Callable[[Mapping[str, Any], str], SummarySpec]] = {
    "quantile": _quantile_spec,
    "sum": _sum_stat,
    "mean": _mean_spec,
}
"""Each summary kind's parser under its default method; another method is `_robust_spec`'s,
a model's is `model_spec.parse_model`'s."""
