"""What every statistic provides: one object per statistic kind and method (`registry`).

The budget code (`entry`, `allocation`), the release (`dprelease.release.statistics`), the
files and the report ask the statistic's object, never its type: adding a statistic is its
spec in `dprelease.plan.stat_spec` (the plan's syntax sits below everything that reads it),
its module here with its object, and one line in `registry`.

A calibrated mechanism is a frozen value with at least `spec` and `cost` (a `Share` that never
exceeds the share it was calibrated to).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from dprelease.plan.stat_spec import StatSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.noise import StatNoise


class Calibrated(Protocol):
    """A statistic's calibrated mechanism: its spec and what it costs."""

    @property
    def cost(self) -> Share: ...


M = TypeVar("M", bound=Calibrated)
NoiseFields = tuple[float | None, float | None, float | None, float | None]


class StatisticKind(ABC, Generic[M]):
    """One statistic kind and method: calibration, draw, errors and their texts."""

    kind: str  # the spec's kind: quantile | sum | mean
    method: str  # the spec's method (stat_spec.METHODS)
    mechanism_text: str  # the report's description of the mechanism
    zcdp_divisor: int = 2  # the mechanism's own ε ↦ ρ = ε²/divisor (locks, the error curve)
    needs_delta: bool = True  # takes a δ share under approx accounting
    curve_unit: str = "sum"  # what the Budget page's error curve measures

    @abstractmethod
    def calibrate(self, spec: StatSpec, share: Share, ctx: StatContext) -> M:
        """The mechanism the share buys (its exact cost never exceeds the share)."""

    @abstractmethod
    def mechanism_name(self, mech: M) -> str:
        """The `mechanism` of its `plan --json` entry."""

    @abstractmethod
    def error(self, mech: M, confidence: float) -> dict[str, Any]:
        """Margins of error known without the data (`plan --json`'s `error`)."""

    @abstractmethod
    def sensitivity(self, mech: M) -> dict[str, float | None]:
        """`plan --json`'s `sensitivity` (l1, l2)."""

    def noise_fields(self, mech: M, cells: int, confidence: float) -> NoiseFields:
        """(noise_scale, noise_std, moe, moe_table) of its `plan --json` entry."""
        return None, None, None, None

    @abstractmethod
    def draw(self, data: StatData, mech: M, noise: StatNoise) -> np.ndarray:
        """Released values per cell ((cells,) or (cells, k)): secure or PREVIEW by `noise`."""

    def draw_with_moe(
        self, data: StatData, mech: M, noise: StatNoise, confidence: float
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The released values and each one's margin of error at `confidence`, in the values'
        units (the CSV's `moe`, issue 37): from the method's own error bound and the released
        (noisy) figures only, never a true value. None: the method has no bound in value
        units without the data (a quantile's exponential mechanism: its bound is in rank)."""
        values = self.draw(data, mech, noise)
        return values, self.value_moe(mech, values, confidence)

    def value_moe(self, mech: M, values: np.ndarray, confidence: float) -> np.ndarray | None:
        """A data-free margin of each released value (see `draw_with_moe`), None if none."""
        return None

    @abstractmethod
    def preview_error(
        self, data: StatData, mech: M, alpha: float, rng: np.random.Generator
    ) -> list[dict[str, float]]:
        """CONFIDENTIAL (Preview only): each cell's error at 1 − α, read from the data."""

    @abstractmethod
    def summary(self, entry: dict[str, Any]) -> str:
        """Its error in `plan`'s one-line text, from its `plan --json` entry."""

    @abstractmethod
    def error_text(self, error: dict[str, Any], confidence: str) -> str:
        """Its error in the report, from its `plan --json` `error`."""

    @abstractmethod
    def short_margin(self, error: dict[str, Any]) -> str:
        """Its error in a few characters (the Budget page's table), from its `error`."""

    @abstractmethod
    def curve_moe(self, error: dict[str, Any]) -> float:
        """The one number the Budget page's error curve draws."""

    def table(
        self, mech: M, values: np.ndarray, confidence: float
    ) -> tuple[list[str], list[list[Any]]] | None:
        """A statistic released as its own table (a regression's coefficients, a PCA's
        components): (header, rows) from the drawn values; None: one value per cell."""
        return None

    def csv_labels(self, spec: StatSpec) -> tuple[str, ...] | None:
        """Labels of a `quantile` column when a cell has several values, else None."""
        return None

    def choice(self, spec: StatSpec) -> str:
        """Why this method (the Budget and Preview pages show it)."""
        return self.mechanism_text

    # --- issue 38.3: `method: auto` compares methods, and says which it chose -----------------

    def expected_rmse(self, mech: M, cell_rows: int) -> float | None:
        """Data-free: the expected RMSE of one released value on the planner's reference cell
        (`cell_rows` rows spread evenly over the bounds, `stats.reference`); None where the
        method has no such figure. `method: auto` picks the least."""
        return None

    def chosen_method(self, mech: M) -> str:
        """The method that draws the values (`auto`'s choice; else this one)."""
        return self.method

    def resolved_spec(self, mech: M, spec: StatSpec) -> StatSpec:
        """The spec of the method that draws (`auto`'s chosen candidate; else `spec`)."""
        return spec

    def method_choice(self, mech: M) -> dict[str, Any] | None:
        """`auto`'s choice as `plan --json` and metadata.json state it (else None)."""
        return None

    def reason(self, mech: M, spec: StatSpec) -> str:
        """Why this method, once calibrated (the "How each statistic is computed" list)."""
        return self.choice(spec)
