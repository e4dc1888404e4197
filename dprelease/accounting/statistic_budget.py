"""A statistic's and a discovery's calibrated budget, and their data-free errors (issue 16).

`dprelease.accounting.statistics` decides each share; this module turns a share into a
calibrated mechanism (`calibrate`) and says what it buys: the entry `plan --json` lists, the
line `plan` prints, and the error against ε the Budget page draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from dprelease.accounting.accountants.registry import settled
from dprelease.errors import quote
from dprelease.plan.model import Plan
from dprelease.plan.statistic import Discovery, StatisticTable
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.discovery import DiscoveryMechanism
from dprelease.stats.means import MeanMechanism, calibrate_mean
from dprelease.stats.quantile import QuantileMechanism, calibrate_quantile
from dprelease.stats.spec import (
    MeanSpec,
    QuantileSpec,
    stat_label,
    stat_resolution,
    stat_rule,
    stat_to_dict,
)
from dprelease.stats.sums import SumMechanism, calibrate_sum


class Budgeted(Protocol):
    """What `statistics_text` reads of an allocation (`allocated.Allocation`, which lists
    this module's budgets: typed here by shape, so the two modules do not import each other)."""

    @property
    def statistics(self) -> tuple[StatisticBudget, ...]: ...

    @property
    def discoveries(self) -> tuple[DiscoveryBudget, ...]: ...


StatMechanism = QuantileMechanism | SumMechanism | MeanMechanism
CLAMPING = (
    "Values outside the bounds are clamped into them before the statistic is computed: values "
    "above the upper bound pull it down, values below the lower bound pull it up. The size of "
    "this bias depends on the data and is not in any margin of error."
)


def _cost_dict(cost: Share) -> dict[str, float | None]:
    return {"epsilon": cost.epsilon, "delta": cost.delta or None, "rho": cost.rho}


@dataclass(frozen=True)
class StatisticBudget:
    """One statistic's share, calibrated mechanism and data-free error. All public."""

    statistic: StatisticTable
    cells: int
    mechanism: StatMechanism
    confidence: float

    @property
    def name(self) -> str:
        return self.statistic.name

    @property
    def cost(self) -> Share:
        return self.mechanism.cost

    @property
    def mechanism_name(self) -> str:
        if isinstance(self.mechanism, QuantileMechanism):
            return "exponential"
        if isinstance(self.mechanism, MeanMechanism):
            return self.mechanism.total.noise.mechanism
        return self.mechanism.noise.mechanism

    def error(self) -> dict[str, Any]:
        """Margins of error at the plan's confidence, known without the data.

        Quantile: the rank error beyond the best grid candidate's, s·ln(K/α) (its value error
        depends on the data's density: the Preview shows it, exactly, to the data holder).
        Sum: the noise's margin in the column's units. Mean: the margins of its sum and count;
        the mean's error ≈ √(σ_S² + μ²σ_N²)/n shrinks with the group's n rows.
        """
        alpha = 1 - self.confidence
        mech = self.mechanism
        if isinstance(mech, QuantileMechanism):
            return {"moe_rank": list(mech.rank_moe_bound(alpha)), "moe_value": None}
        if isinstance(mech, SumMechanism):
            return {"moe": mech.value_moe(alpha), "noise_std": mech.value_std}
        return {
            "sum_moe": mech.total.value_moe(alpha),
            "count_moe": mech.count_noise.moe(alpha),
            "sum_noise_std": mech.total.value_std,
            "count_noise_std": mech.count_noise.std,
        }

    def sensitivity(self) -> dict[str, float | None]:
        """L1 and L2 in the column's units (a sum; a mean's sum part), or a quantile's score
        sensitivity Δ (its largest over the quantiles) as `l1`, `l2` null."""
        mech = self.mechanism
        if isinstance(mech, QuantileMechanism):
            return {"l1": float(max(mech.sensitivities)), "l2": None}
        total = mech.total if isinstance(mech, MeanMechanism) else mech
        unit = float(total.spec.resolution)
        return {"l1": total.sensitivity.l1 * unit, "l2": total.sensitivity.l2 * unit}

    def to_dict(self) -> dict[str, Any]:
        """The statistic's entry in `plan --json`'s tables (a table's keys, plus `stat`)."""
        mech = self.mechanism
        error = self.error()
        scale = std = moe = moe_table = None
        if isinstance(mech, SumMechanism):
            scale = mech.noise.scale * float(mech.spec.resolution)
            std, moe = mech.value_std, error["moe"]
            moe_table = mech.noise.moe_table(1 - self.confidence, max(self.cells, 1)) * float(
                mech.spec.resolution
            )
        elif isinstance(mech, QuantileMechanism):
            scale = max(mech.scales)
        return {
            "name": self.name,
            "by": list(self.statistic.by),
            "cells": self.cells,
            "stat": stat_to_dict(self.statistic.stat),
            "kind": self.statistic.stat.kind,
            "description": stat_label(self.statistic.stat),
            "mechanism": self.mechanism_name,
            "sensitivity": self.sensitivity(),
            **_cost_dict(self.cost),
            "noise_scale": scale,
            "noise_std": std,
            "moe": moe,
            "moe_table": moe_table,
            "error": error,
            "rows_used": stat_rule(self.statistic.stat),  # the rule, never how many rows
            "resolution": stat_resolution(self.statistic.stat),
            "clamping": CLAMPING,
            "weight": self.statistic.table.weight,
            "locked": self.statistic.table.locked,
        }


@dataclass(frozen=True)
class DiscoveryBudget:
    """One column's domain discovery: noise, threshold and cost. All public."""

    discovery: Discovery
    mechanism: DiscoveryMechanism

    @property
    def column(self) -> str:
        return self.discovery.column

    def to_dict(self) -> dict[str, Any]:
        mech = self.mechanism
        return {
            "column": self.column,
            "min_count": self.discovery.spec.min_count,
            "threshold": mech.threshold,
            "mechanism": mech.noise.mechanism,
            "noise_scale": mech.noise.scale,
            **_cost_dict(mech.cost),
        }


def context(plan: Plan, by: Sequence[str]) -> StatContext:
    return StatContext(plan.unit.max_rows, plan.neighbors, grouped=bool(by))


def calibrate(statistic: StatisticTable, share: Share, ctx: StatContext) -> StatMechanism:
    stat = statistic.stat
    if isinstance(stat, QuantileSpec):
        return calibrate_quantile(stat, share, ctx)
    if isinstance(stat, MeanSpec):
        return calibrate_mean(stat, share, ctx)
    return calibrate_sum(stat, share, ctx)


def statistic_error_curve(
    plan: Plan, statistic: StatisticTable, epsilons: Sequence[float]
) -> list[dict[str, Any]]:
    """The statistic's data-free error if it alone had each ε (for the Budget page's chart):
    the pure ε of the mechanism, under zcdp its ρ (ε²/8 for a quantile, ε²/2 otherwise)."""
    accountant = settled(plan.budget)
    quarter = isinstance(statistic.stat, QuantileSpec)  # the exponential mechanism: ε²/8
    delta = plan.budget.delta if accountant.splits_delta else None
    points = []
    for epsilon in epsilons:
        amount = float(accountant.of_epsilon(Fraction(epsilon), quarter))
        share = Share(accountant.name, **accountant.unit_fields(amount), delta=delta)
        mech = calibrate(statistic, share, context(plan, statistic.by))
        cells = math.prod(plan.schema[c].size for c in statistic.by)
        error = StatisticBudget(statistic, cells, mech, plan.budget.confidence).error()
        value = error.get("moe") or error.get("sum_moe") or max(error.get("moe_rank") or [0.0])
        points.append({"epsilon": epsilon, "moe": value, "unit": _unit(statistic)})
    return points


def _unit(statistic: StatisticTable) -> str:
    if isinstance(statistic.stat, QuantileSpec):
        return "rank"
    return f"{quote(statistic.stat.column)} (sum)"


def statistics_text(allocation: Budgeted) -> str:
    """The statistics and discoveries in `plan`'s text summary (one line each)."""
    lines = []
    for s in allocation.statistics:
        entry = s.to_dict()
        cost = ", ".join(f"{k}={entry[k]:.4g}" for k in ("epsilon", "delta", "rho") if entry[k])
        error = entry["error"]
        if "moe_rank" in error:
            shown = "rank moe " + ", ".join(f"{r:.4g}" for r in error["moe_rank"])
            shown += f", resolution {entry['resolution']:g}"
        elif "sum_moe" in error:
            shown = f"sum moe {error['sum_moe']:.4g}, count moe {error['count_moe']:.4g}"
        else:
            shown = f"moe {error['moe']:.4g}"
        lines.append(
            f"statistic {s.name}: {entry['description']} by [{', '.join(s.statistic.by)}], "
            f"{entry['mechanism']}, {cost}, {shown}\n"
        )
    for d in allocation.discoveries:
        entry = d.to_dict()
        cost = ", ".join(f"{k}={entry[k]:.4g}" for k in ("epsilon", "delta", "rho") if entry[k])
        lines.append(
            f"discovery {d.column}: values whose noisy count reaches {entry['threshold']} "
            f"(min_count {entry['min_count']}), {cost}; tables over it get their cells then\n"
        )
    return "".join(lines)
