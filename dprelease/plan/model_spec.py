"""A regression's and a PCA's `stat:` as validated values (issue 28, part 4).

Plan syntax (PLAN_AND_CLI.md §5):

    stat: {regression: {y: income, x: [age, hours], family: linear}, bounds: {income: [0, 500000],
           age: [16, 95], hours: [0, 99]}}
    stat: {regression: {y: employed, x: [age], family: logistic, regularization: 1},
           bounds: {age: [16, 95]}}            # y of a logistic regression: bounds default [0, 1]
    stat: {pca: [age, hours, income], k: 2, bounds: {age: [16, 95], ...}}

Every column the statistic reads needs public bounds [lo, hi] (lo < hi): values are clamped
into them, and they fix the sensitivity. A logistic regression's y is clamped into its bounds
and rounded to the nearer end: the upper end is the positive class. `regularization` (logistic
only) is Λ of the objective Σ loss + Λ/2·‖w‖²; left out (or 1, the value it is written as),
Λ is chosen from ε and the unit's rows (issue 38.2; see `dprelease.stats.logistic`).
A row with a missing or non-numeric value in any of the statistic's columns is left out of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dprelease.errors import PlanError, quote
from dprelease.plan.bounds import parse_bounds, parse_number

FAMILIES = ("linear", "logistic")
MODEL_METHODS: dict[str, tuple[str, ...]] = {"regression": FAMILIES, "pca": ("noisy_covariance",)}
"""Each model's methods (`stat_spec.METHODS`): a regression's family, PCA's one."""
MAX_MODEL_COLUMNS = 20  # noise grows with the number of moments, (p+1)(p+2)/2
DEFAULT_REGULARIZATION = 1.0
Family = Literal["linear", "logistic"]


def _columns(raw: object, what: str) -> tuple[str, ...]:
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list | tuple) or not names:
        raise PlanError(f"{what} must be a list of column names, got {quote(raw)}.")
    for name in names:
        if not isinstance(name, str) or not name:
            raise PlanError(f"{what} must hold column names, got {quote(name)}.")
    if len(set(names)) != len(names):
        raise PlanError(f"{what} names a column twice: {quote(list(names))}.")
    if len(names) > MAX_MODEL_COLUMNS:
        raise PlanError(f"{what} takes at most {MAX_MODEL_COLUMNS} columns, got {len(names)}.")
    return tuple(names)


def _bounds_of(
    raw: object, columns: tuple[str, ...], what: str, defaults: Mapping[str, tuple[float, float]]
) -> tuple[tuple[float, float], ...]:
    """Each column's bounds from `bounds: {C: [lo, hi]}`; every key must be one of them."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise PlanError(f"{what}.bounds must be a mapping {{column: [lo, hi], ...}}.")
    unknown = sorted(str(k) for k in raw if k not in columns)
    if unknown:
        raise PlanError(
            f"{what}.bounds names {', '.join(map(quote, unknown))}, which the statistic does not "
            f"use (it uses: {', '.join(columns)})."
        )
    out = []
    for name in columns:
        if name in raw:
            out.append(parse_bounds(raw[name], f"{what}.bounds.{name}"))
        elif name in defaults:
            out.append(defaults[name])
        else:
            raise PlanError(f"{what}.bounds needs [lo, hi] for column {quote(name)}.")
    return tuple(out)


@dataclass(frozen=True)
class RegressionSpec:
    """y on x (with an intercept); `bounds` in the order (x..., y)."""

    y: str
    x: tuple[str, ...]
    family: Family
    bounds: tuple[tuple[float, float], ...]
    regularization: float = DEFAULT_REGULARIZATION

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise PlanError(
                f"regression.family must be one of {', '.join(FAMILIES)}, got {quote(self.family)}."
            )
        if self.y in self.x:
            raise PlanError(f"regression uses column {quote(self.y)} as both y and x.")
        if len(self.bounds) != len(self.x) + 1:
            raise PlanError("regression needs one [lo, hi] per column (x..., y).")
        if not (self.regularization > 0 and math.isfinite(self.regularization)):
            raise PlanError(
                f"regression.regularization must be a number > 0, got {self.regularization!r}."
            )

    @property
    def kind(self) -> str:
        return "regression"

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns read, in the order of `bounds`: x..., then y."""
        return (*self.x, self.y)

    @property
    def method(self) -> str:
        return self.family

    @property
    def column(self) -> str:
        """The statistic's main column (y), as other statistics have one."""
        return self.y

    @property
    def terms(self) -> tuple[str, ...]:
        """The rows of the released table: intercept, then each x."""
        return ("intercept", *self.x)


@dataclass(frozen=True)
class PcaSpec:
    """The top `k` principal components of the covariance of `columns` (in their own units)."""

    columns: tuple[str, ...]
    k: int
    bounds: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        if len(self.columns) < 2:
            raise PlanError("pca needs at least 2 columns.")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise PlanError(f"pca k must be a whole number ≥ 1, got {quote(self.k)}.")
        if self.k > len(self.columns):
            raise PlanError(
                f"pca k must be at most the number of columns ({len(self.columns)}), got {self.k}."
            )
        if len(self.bounds) != len(self.columns):
            raise PlanError("pca needs one [lo, hi] per column.")

    @property
    def kind(self) -> str:
        return "pca"

    @property
    def method(self) -> str:
        return "noisy_covariance"

    @property
    def column(self) -> str:
        return self.columns[0]


ModelSpec = RegressionSpec | PcaSpec


def parse_model(raw: Mapping[str, Any], what: str) -> ModelSpec:
    """`{regression: {...}, bounds: {...}}` or `{pca: [...], k: K, bounds: {...}}`."""
    if "regression" in raw:
        unknown = sorted(set(raw) - {"regression", "bounds"})
        if unknown:
            raise PlanError(
                f"{what} has unknown keys {unknown}; allowed: ['bounds', 'regression']."
            )
        body = raw["regression"]
        if not isinstance(body, Mapping):
            raise PlanError(f"{what}.regression must be a mapping {{y: C, x: [C, ...], family}}.")
        extra = sorted(set(body) - {"y", "x", "family", "regularization"})
        if extra:
            raise PlanError(
                f"{what}.regression has unknown keys {extra}; allowed: family, regularization, "
                "x, y."
            )
        family = body.get("family", "linear")
        if family not in FAMILIES:
            raise PlanError(
                f"{what}.regression.family must be one of {', '.join(FAMILIES)}, got "
                f"{quote(family)}."
            )
        y = _columns(body.get("y"), f"{what}.regression.y")
        if len(y) != 1:
            raise PlanError(f"{what}.regression.y must be one column.")
        x = _columns(body.get("x"), f"{what}.regression.x")
        defaults = {y[0]: (0.0, 1.0)} if family == "logistic" else {}
        bounds = _bounds_of(raw.get("bounds"), (*x, y[0]), what, defaults)
        lam = body.get("regularization", DEFAULT_REGULARIZATION)
        if family == "linear" and "regularization" in body:
            raise PlanError(f"{what}.regression.regularization applies to family logistic only.")
        return RegressionSpec(
            y[0], x, family, bounds, parse_number(lam, f"{what}.regression.regularization")
        )
    unknown = sorted(set(raw) - {"pca", "k", "bounds"})
    if unknown:
        raise PlanError(f"{what} has unknown keys {unknown}; allowed: ['bounds', 'k', 'pca'].")
    columns = _columns(raw["pca"], f"{what}.pca")
    k = raw.get("k", 1)
    if isinstance(k, bool) or not isinstance(k, int):
        raise PlanError(f"{what}.k must be a whole number ≥ 1, got {quote(k)}.")
    return PcaSpec(columns, k, _bounds_of(raw.get("bounds"), columns, what, {}))


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def model_to_dict(spec: ModelSpec) -> dict[str, Any]:
    """The plan's `stat:` mapping; `parse_model(model_to_dict(s))` gives `s` back."""
    bounds = {
        c: [_plain(lo), _plain(hi)] for c, (lo, hi) in zip(_cols(spec), spec.bounds, strict=True)
    }
    if isinstance(spec, PcaSpec):
        return {"pca": list(spec.columns), "k": spec.k, "bounds": bounds}
    body: dict[str, Any] = {"y": spec.y, "x": list(spec.x), "family": spec.family}
    if spec.family == "logistic" and spec.regularization != DEFAULT_REGULARIZATION:
        body["regularization"] = _plain(spec.regularization)
    return {"regression": body, "bounds": bounds}


def _cols(spec: ModelSpec) -> tuple[str, ...]:
    return spec.columns


def model_label(spec: ModelSpec) -> str:
    """A short public description."""
    if isinstance(spec, PcaSpec):
        return f"top {spec.k} principal components of {', '.join(spec.columns)}"
    return f"{spec.family} regression of {spec.y} on {', '.join(spec.x)}"


def model_rule(spec: ModelSpec) -> str:
    """Which rows the statistic uses and what it does to their values (public)."""
    clamps = "; ".join(
        f"{c} clamped into [{_plain(lo)}, {_plain(hi)}]"
        for c, (lo, hi) in zip(spec.columns, spec.bounds, strict=True)
    )
    rule = (
        f"{model_label(spec)} over the rows where every one of {', '.join(spec.columns)} is a "
        f"number (a missing or non-numeric value leaves its row out of this statistic); {clamps}"
    )
    if isinstance(spec, RegressionSpec) and spec.family == "logistic":
        rule += (
            f"; {spec.y} is rounded to the nearer bound, the upper bound being the positive class"
        )
    return rule
