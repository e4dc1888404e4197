"""A statistic's and a discovery's calibrated budget, and their data-free errors (issue 16).

`dprelease.stats.allocation` decides each share; this module turns a share into a
calibrated mechanism (`calibrate`, through the statistic's object in `registry`) and says what
it buys: the entry `plan --json` lists, the line `plan` prints, and the error against ε the
Budget page draws.
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
from dprelease.plan.stat_spec import stat_resolution, stat_to_dict
from dprelease.plan.stat_text import stat_label, stat_rule
from dprelease.plan.statistic import Discovery, StatisticTable
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.kind import Calibrated, StatisticKind
from dprelease.stats.registry import DiscoveryMechanism, kind_of, kind_of_entry

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
    mechanism: Calibrated
    confidence: float

    @property
    def name(self) -> str:
        return self.statistic.name

    @property
    def cost(self) -> Share:
        return self.mechanism.cost

    @property
    def kind(self) -> StatisticKind[Any]:
        """The statistic's object (`registry`): everything asked of it goes through it."""
        return kind_of(self.statistic.stat)

    @property
    def mechanism_name(self) -> str:
        return self.kind.mechanism_name(self.mechanism)

    @property
    def method(self) -> str:
        """The method that draws (`method: auto`'s choice, issue 38.3)."""
        return self.kind.chosen_method(self.mechanism)

    def reason(self) -> str:
        """Why this method (public; with `auto`, every candidate's expected error)."""
        return self.kind.reason(self.mechanism, self.statistic.stat)

    def method_choice(self) -> dict[str, Any] | None:
        """`auto`'s choice: the candidates' expected RMSE and the assumption (else None)."""
        return self.kind.method_choice(self.mechanism)

    def error(self) -> dict[str, Any]:
        """Margins of error at the plan's confidence, known without the data (the
        statistic's own, `StatisticKind.error`)."""
        return self.kind.error(self.mechanism, self.confidence)

    def sensitivity(self) -> dict[str, float | None]:
        return self.kind.sensitivity(self.mechanism)

    def to_dict(self) -> dict[str, Any]:
        """The statistic's entry in `plan --json`'s tables (a table's keys, plus `stat`)."""
        error = self.error()
        fields = self.kind.noise_fields(self.mechanism, self.cells, self.confidence)
        scale, std, moe, moe_table = fields
        drawn = self.kind.resolved_spec(self.mechanism, self.statistic.stat)  # auto's choice
        return {
            "name": self.name,
            "by": list(self.statistic.by),
            "cells": self.cells,
            "stat": stat_to_dict(self.statistic.stat),
            "kind": self.statistic.stat.kind,
            "description": stat_label(self.statistic.stat),
            "mechanism": self.mechanism_name,
            "method": self.method,
            "method_choice": self.method_choice(),
            "sensitivity": self.sensitivity(),
            **_cost_dict(self.cost),
            "noise_scale": scale,
            "noise_std": std,
            "moe": moe,
            "moe_table": moe_table,
            "error": error,
            "rows_used": stat_rule(drawn),  # the rule, never how many rows
            "resolution": stat_resolution(drawn),
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


def calibrate(statistic: StatisticTable, share: Share, ctx: StatContext) -> Calibrated:
    """The statistic's mechanism at this share (its object's calibration)."""
    result: Calibrated = kind_of(statistic.stat).calibrate(statistic.stat, share, ctx)
    return result


def statistic_error_curve(
    plan: Plan, statistic: StatisticTable, epsilons: Sequence[float]
) -> list[dict[str, Any]]:
    """The statistic's data-free error if it alone had each ε (for the Budget page's chart):
    the pure ε of the mechanism, under zcdp its ρ (ε²/divisor: 8 for the exponential
    mechanism's bounded range, 2 otherwise; the statistic's `zcdp_divisor`)."""
    accountant = settled(plan.budget)
    kind = kind_of(statistic.stat)
    bounded_range = kind.zcdp_divisor == 8
    delta = plan.budget.delta if accountant.splits_delta else None
    points = []
    for epsilon in epsilons:
        amount = float(accountant.of_epsilon(Fraction(epsilon), bounded_range))
        share = Share(accountant.name, **accountant.unit_fields(amount), delta=delta)
        mech = calibrate(statistic, share, context(plan, statistic.by))
        cells = math.prod(plan.schema[c].size for c in statistic.by)
        error = StatisticBudget(statistic, cells, mech, plan.budget.confidence).error()
        points.append(
            {"epsilon": epsilon, "moe": kind.curve_moe(error), "unit": _unit(kind, statistic)}
        )
    return points


def _unit(kind: StatisticKind[Any], statistic: StatisticTable) -> str:
    if kind.curve_unit == "rank":
        return "rank"
    return f"{quote(statistic.stat.column)} ({kind.curve_unit})"


class WithStatistics(Protocol):
    """What `statistics_text` reads of an allocation (`allocation.PlanAllocation`)."""

    @property
    def statistics(self) -> tuple[StatisticBudget, ...]: ...

    @property
    def discoveries(self) -> tuple[DiscoveryBudget, ...]: ...


def statistics_text(allocation: WithStatistics) -> str:
    """The statistics and discoveries in `plan`'s text summary (one line each)."""
    lines = []
    for s in allocation.statistics:
        entry = s.to_dict()
        cost = ", ".join(f"{k}={entry[k]:.4g}" for k in ("epsilon", "delta", "rho") if entry[k])
        shown = kind_of_entry(entry).summary(entry)
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
