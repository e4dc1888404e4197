"""`method: auto` (issue 38.3): a quantile's or mean's method with the least expected error.

The plan's `AutoSpec` holds one full spec per candidate method (a quantile: the exponential
mechanism and smooth sensitivity; a mean: the clamped sum over count and sample and
aggregate). At calibration, before any noise and without reading data, each candidate is
calibrated to the statistic's own share (the same ε, δ or ρ), and its expected RMSE is
computed on the planner's reference cell (`stats.reference`: the plan's public
`min_cell_rows`, else AUTO_CELL_ROWS rows, spread evenly over the declared bounds). The
least wins, the default method on a tie; a candidate the share cannot afford is left out. The
choice is a function of the spec, the share and the privacy unit alone, so the same plan
chooses the same method on any data; the chosen mechanism's own cost is what the release is
charged (never above the share).

Everything else is the chosen method's: its draw, its margins, its files. `plan --json` and
metadata.json name the chosen method (`method`) and give every candidate's expected error
(`method_choice`); the Budget page lists them under "How each statistic is computed".

Why evenly spread values: the methods' errors scale alike with the spread of the values, so
a spread that fills the bounds compares them fairly whatever the data, and it is the only
spread the plan states. What the comparison turns on: the exponential mechanism's error is at
least its grid's rounding (the bounds over at most 10,000 candidates), smooth sensitivity's
falls like 1/(n·ε²) and loses badly on small cells, the clamped mean's noise falls like 1/n
and sample and aggregate's like 1/√n. Real values crowd more than even ones near a median,
which favours smooth sensitivity a little; a cell smaller than the reference favours the
bounded methods, hence the small default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprelease.errors import BudgetError, InternalError
from dprelease.plan.stat_kinds import AUTO
from dprelease.plan.stat_spec import AutoSpec, StatSpec, stat_bounds
from dprelease.plan.summary_spec import bounds_out
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.kind import Calibrated, NoiseFields, StatisticKind
from dprelease.stats.noise import StatNoise


@dataclass(frozen=True)
class Option:
    """One candidate method, calibrated to the share, and its expected RMSE (public)."""

    method: str
    expected_rmse: float
    spec: StatSpec
    mechanism: Calibrated


@dataclass(frozen=True)
class AutoMechanism:
    """The candidates and the chosen one (the least expected RMSE, the first on a tie)."""

    spec: AutoSpec
    options: tuple[Option, ...]
    chosen: int

    @property
    def option(self) -> Option:
        return self.options[self.chosen]

    @property
    def inner(self) -> Any:
        return self.option.mechanism

    @property
    def cost(self) -> Share:
        return self.option.mechanism.cost


def assumption(spec: AutoSpec) -> str:
    """The public facts the expected errors assume, in words."""
    lo, hi = bounds_out(*stat_bounds(spec))
    rows = f"a cell of {spec.cell_rows:,} rows"
    source = (
        "min_cell_rows, a public lower bound"
        if spec.min_cell_rows is not None
        else "no public min_cell_rows: a small cell, the conservative case"
    )
    return f"{rows} ({source}), its values spread evenly over the bounds [{lo}, {hi}]"


class AutoKind(StatisticKind[AutoMechanism]):
    """`method: auto` of one kind: it chooses among `kinds` (the default method first)."""

    curve_unit = "expected RMSE"

    def __init__(self, *kinds: StatisticKind[Any]) -> None:
        if len({k.kind for k in kinds}) != 1 or len(kinds) < 2:
            raise InternalError("method auto chooses among two or more methods of one kind")
        self._kinds = {k.method: k for k in kinds}
        self.kind = kinds[0].kind
        self.method = AUTO
        self.needs_delta = any(k.needs_delta for k in kinds)  # a share for every candidate
        self.zcdp_divisor = min(k.zcdp_divisor for k in kinds)  # a lock's ρ: the larger
        self.mechanism_text = (
            "the method with the least expected error for the plan's public facts: "
            + ", ".join(m.replace("_", " ") for m in self._kinds)
        )

    def _of(self, method: str) -> StatisticKind[Any]:
        return self._kinds[method]

    def _chosen(self, mech: AutoMechanism) -> StatisticKind[Any]:
        return self._of(mech.option.method)

    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> AutoMechanism:
        assert isinstance(spec, AutoSpec)
        options: list[Option] = []
        refused: BudgetError | None = None
        for candidate in spec.candidates:
            kind = self._of(candidate.method)
            try:
                mechanism = kind.calibrate(candidate, share, ctx)
            except BudgetError as error:  # the share cannot afford this method: not a candidate
                refused = error
                continue
            rmse = kind.expected_rmse(mechanism, spec.cell_rows)
            finite = rmse if rmse is not None and math.isfinite(rmse) else math.inf
            options.append(Option(candidate.method, finite, candidate, mechanism))
        if not options:
            raise refused or InternalError("method auto has no candidate")
        chosen = min(range(len(options)), key=lambda i: (options[i].expected_rmse, i))
        return AutoMechanism(spec, tuple(options), chosen)

    # --- the chosen method's, asked of it -----------------------------------------------------

    def mechanism_name(self, mech: AutoMechanism) -> str:
        return str(self._chosen(mech).mechanism_name(mech.inner))

    def error(self, mech: AutoMechanism, confidence: float) -> dict[str, Any]:
        own: dict[str, Any] = self._chosen(mech).error(mech.inner, confidence)
        return {**own, "method": mech.option.method, "expected_rmse": mech.option.expected_rmse}

    def sensitivity(self, mech: AutoMechanism) -> dict[str, float | None]:
        return self._chosen(mech).sensitivity(mech.inner)

    def noise_fields(self, mech: AutoMechanism, cells: int, confidence: float) -> NoiseFields:
        return self._chosen(mech).noise_fields(mech.inner, cells, confidence)

    def draw(self, data: StatData, mech: AutoMechanism, noise: StatNoise) -> np.ndarray:
        return self._chosen(mech).draw(data, mech.inner, noise)

    def draw_with_moe(
        self, data: StatData, mech: AutoMechanism, noise: StatNoise, confidence: float
    ) -> tuple[np.ndarray, np.ndarray | None]:
        return self._chosen(mech).draw_with_moe(data, mech.inner, noise, confidence)

    def value_moe(
        self, mech: AutoMechanism, values: np.ndarray, confidence: float
    ) -> np.ndarray | None:
        return self._chosen(mech).value_moe(mech.inner, values, confidence)

    def preview_error(
        self, data: StatData, mech: AutoMechanism, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        return self._chosen(mech).preview_error(data, mech.inner, alpha, rng)

    def table(
        self, mech: AutoMechanism, values: np.ndarray, confidence: float
    ) -> tuple[list[str], list[list[Any]]] | None:
        return self._chosen(mech).table(mech.inner, values, confidence)

    def csv_labels(self, spec: StatSpec) -> tuple[str, ...] | None:
        assert isinstance(spec, AutoSpec)  # every candidate labels its values alike
        first = spec.candidates[0]
        return self._of(first.method).csv_labels(first)

    def summary(self, entry: dict[str, Any]) -> str:
        return self._of(entry["error"]["method"]).summary(entry)

    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        return self._of(error["method"]).error_text(error, confidence)

    def short_margin(self, error: dict[str, Any]) -> str:
        return self._of(error["method"]).short_margin(error)

    def curve_moe(self, error: dict[str, Any]) -> float:
        return float(error["expected_rmse"])

    def choice(self, spec: StatSpec) -> str:
        return "auto: " + self.mechanism_text

    # --- the choice, stated -------------------------------------------------------------------

    def expected_rmse(self, mech: AutoMechanism, cell_rows: int) -> float | None:
        return self._chosen(mech).expected_rmse(mech.inner, cell_rows)

    def chosen_method(self, mech: AutoMechanism) -> str:
        return mech.option.method

    def resolved_spec(self, mech: AutoMechanism, spec: StatSpec) -> StatSpec:
        return mech.option.spec

    def method_choice(self, mech: AutoMechanism) -> dict[str, Any]:
        return {
            "requested": AUTO,
            "chosen": mech.option.method,
            "cell_rows": mech.spec.cell_rows,
            "cell_rows_source": "min_cell_rows" if mech.spec.min_cell_rows else "assumed",
            "assumption": assumption(mech.spec),
            "candidates": [
                {
                    "method": o.method,
                    "expected_rmse": o.expected_rmse,
                    "chosen": i == mech.chosen,
                }
                for i, o in enumerate(mech.options)
            ],
        }

    def reason(self, mech: AutoMechanism, spec: StatSpec) -> str:
        others = [o for o in mech.options if o is not mech.option]
        versus = ", ".join(f"{o.method.replace('_', ' ')} {o.expected_rmse:,.4g}" for o in others)
        own = self._chosen(mech).reason(mech.inner, mech.option.spec)
        return (
            f"auto chose it: the least expected RMSE, {mech.option.expected_rmse:,.4g} "
            f"(against {versus or 'no other method the share affords'}) for "
            f"{assumption(mech.spec)}. {own[:1].upper()}{own[1:]}"
        )
