"""What an allocation is: per table and per measurement its budget and noise (all public).

`TableBudget` describes one noisy measurement, or one published table. Under
`strategy: workload` the two are the same: every table is measured as listed. Under
`strategy: auto` the release measures other marginals (`Allocation.measurements`) and each
published table is their least-squares combination; its `noise` then describes the error of
that estimate (same variance, see `dprelease.accounting.strategy_allocation`), its budget
fields are null and `measured_as` is None unless a measurement is exactly that table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dprelease.accounting.accountants.base import Accountant
from dprelease.accounting.accountants.registry import accountant
from dprelease.accounting.composition import Guarantee
from dprelease.accounting.mechanisms import DISCRETE_LAPLACE, GAUSSIAN, Noise
from dprelease.budget_text import readable
from dprelease.plan.model import StrategyKind
from dprelease.plan.table_spec import Sensitivity, TableSpec

if TYPE_CHECKING:
    from dprelease.accounting.auto import AccountantChoice


def equivalent_noise(mechanism: str, variance: float) -> Noise:
    """A noise of the measurements' family with the given variance (a published table's error)."""
    if mechanism == DISCRETE_LAPLACE.name:
        # discrete Laplace variance 2q/(1−q)², q = e^{−1/b}: solve v q² − (2v+2) q + v = 0,
        # the root ((v+1) − √(2v+1))/v written without the cancellation that made it 0 (and
        # its log an error) for v below ~1e-9 (ε near 100)
        q = variance / ((variance + 1) + math.sqrt(2 * variance + 1))
        return Noise(DISCRETE_LAPLACE.name, -1 / math.log(q))
    return Noise(GAUSSIAN.name, math.sqrt(variance))


@dataclass(frozen=True)
class TableBudget:
    """One table's share of the budget and the noise it buys. All of it is public."""

    spec: TableSpec
    cells: int
    sensitivity: Sensitivity
    noise: Noise
    epsilon: float | None
    delta: float | None
    rho: float | None
    moe: float
    moe_table: float
    expected_rmse: float  # exact per-cell RMSE of the published (least-squares) estimate
    measured_as: str | None  # the measurement that is this table, if one is

    @property
    def name(self) -> str:
        return self.spec.name

    def to_dict(self) -> dict[str, Any]:
        """The table's entry in `plan --json` (contract keys first)."""
        target = self.spec.target
        return {
            "name": self.spec.name,
            "by": list(self.spec.by),
            "cells": self.cells,
            "mechanism": self.noise.mechanism,
            "sensitivity": {"l1": self.sensitivity.l1, "l2": self.sensitivity.l2},
            # issue 37.4: shares and scales as people read them (6.0, not 6.000000000000001)
            "epsilon": readable(self.epsilon),
            "delta": readable(self.delta),
            "rho": readable(self.rho),
            "noise_scale": readable(self.noise.scale),
            "noise_std": readable(self.noise.std),
            "moe": self.moe,
            "moe_table": self.moe_table,
            "expected_rmse": self.expected_rmse,
            "measured_as": self.measured_as,
            "weight": self.spec.weight,
            "locked": self.spec.locked,
            "target": None
            if target is None
            else {"moe": target.moe}
            if target.moe is not None
            else {"moe_table": target.moe_table},
            # issue 37.8: a weighted table's cells are weighted totals, not counts
            **(
                {"survey_weight": self.spec.survey_weight.to_dict()}
                if self.spec.survey_weight is not None
                else {}
            ),
        }


def priced(
    spec: TableSpec,
    cells: int,
    sensitivity: Sensitivity,
    noise: Noise,
    alpha: float,
    *,
    budget: tuple[float | None, float | None, float | None] = (None, None, None),
    expected_rmse: float | None = None,
    measured_as: str | None,
) -> TableBudget:
    """A `TableBudget` whose margins of error follow from its noise at α; `budget` is its
    (ε, δ, ρ) and `expected_rmse` defaults to the noise's own standard deviation."""
    epsilon, delta, rho = budget
    return TableBudget(
        spec=spec,
        cells=cells,
        sensitivity=sensitivity,
        noise=noise,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        moe=noise.moe(alpha),
        moe_table=noise.moe_table(alpha, cells),
        expected_rmse=noise.std if expected_rmse is None else expected_rmse,
        measured_as=measured_as,
    )


@dataclass(frozen=True)
class Allocation:
    """The budget split of a plan and the composed guarantee of the whole release.

    `accounting` is the accountant used (`auto` resolved); `strategy` is "auto" when the
    measurements were chosen for the workload, "workload" when the tables are measured as
    listed (then `measurements` are the tables themselves). The count tables only: a plan's
    statistics and discovered domains are `dprelease.stats.allocation.PlanAllocation`'s.
    """

    accounting: str  # the accountant's name (contract v1: the JSON's "accounting")
    allocation: str
    confidence: float
    total: Guarantee
    tables: tuple[TableBudget, ...]
    measurements: tuple[TableBudget, ...]
    strategy: StrategyKind = "workload"
    required: Guarantee | None = None  # what the accuracy targets need (allocation: targets)
    advice: tuple[str, ...] = ()
    accountant_choice: AccountantChoice | None = None  # set when `accounting: auto` chose

    def table(self, name: str) -> TableBudget:
        return next(t for t in self.tables if t.name == name)

    def measurement(self, name: str) -> TableBudget:
        return next(m for m in self.measurements if m.name == name)

    @property
    def accountant(self) -> Accountant:
        """The accountant the allocation used (`auto` settled)."""
        return accountant(self.accounting)

    @property
    def derived(self) -> bool:
        """True when the published tables are least-squares estimates from other measurements."""
        return self.strategy == "auto"

    def to_dict(self) -> dict[str, Any]:
        """What `plan --json` prints (contract v1 keys, plus extras)."""
        out: dict[str, Any] = {
            "accounting": self.accounting,
            "allocation": self.allocation,
            "strategy": self.strategy,
            "confidence": self.confidence,
            "total": guarantee_dict(self.total),
            "tables": [t.to_dict() for t in self.tables],
            "measurements": [_measurement_dict(m) for m in self.measurements],
            "advice": list(self.advice),
        }
        if self.accountant_choice is not None:
            out["accountant_choice"] = self.accountant_choice.to_dict()
        if self.required is not None:
            out["required"] = guarantee_dict(self.required)
        return out


def _measurement_dict(measurement: TableBudget) -> dict[str, Any]:
    """A `measurements` entry: the fields of `tables` that describe a measurement."""
    keys = ("name", "by", "cells", "mechanism", "sensitivity", "epsilon", "delta", "rho")
    full = measurement.to_dict()
    out = {key: full[key] for key in keys}
    out.update(
        noise_scale=full["noise_scale"],
        noise_std=full["noise_std"],
        moe=full["moe"],
        moe_table=full["moe_table"],
    )
    return out


def guarantee_dict(guarantee: Guarantee) -> dict[str, Any]:
    return {
        "epsilon": guarantee.epsilon,
        "delta": guarantee.delta,
        "rho": guarantee.rho,
        "composition": guarantee.composition,
    }
