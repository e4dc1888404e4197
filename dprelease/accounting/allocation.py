"""Splitting the total budget across tables, and what each share buys (no data needed).

`allocate(plan)` is what `dprelease plan` prints: per table its budget, mechanism, noise and
margin of error, and the composed guarantee of the whole release. Shares are computed in the
accountant's additive unit (ε for pure/advanced, ρ for zCDP, ε and δ for approx); locked
tables keep their value and the others share what is left. Float shares are then nudged down
until an exact (`Fraction`) sum fits the total, and the composed total is checked once more,
so an allocation can never spend more than the plan's target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dprelease.accounting.composition import (
    Guarantee,
    advanced_or_basic,
    basic_composition,
    check_within,
    exact_sum,
    zcdp_guarantee,
)
from dprelease.accounting.mechanisms import (
    DISCRETE_GAUSSIAN,
    DISCRETE_LAPLACE,
    GAUSSIAN,
    Mechanism,
    Noise,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    gaussian_sigma,
    laplace_epsilon,
    laplace_scale,
)
from dprelease.accounting.shares import (
    additive_shares,
    additive_total,
    advanced_shares,
    delta_shares,
    fixed_shares,
)
from dprelease.errors import BudgetError
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec, sensitivity

if TYPE_CHECKING:
    from dprelease.accounting.statistic_budget import DiscoveryBudget, StatisticBudget

MECHANISM_OF: dict[str, Mechanism] = {
    "pure": DISCRETE_LAPLACE,
    "advanced": DISCRETE_LAPLACE,
    "approx": GAUSSIAN,
    "zcdp": DISCRETE_GAUSSIAN,
}
WEAK_EPSILON = 5.0


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
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "noise_scale": self.noise.scale,
            "noise_std": self.noise.std,
            "moe": self.moe,
            "moe_table": self.moe_table,
            "weight": self.spec.weight,
            "locked": self.spec.locked,
            "target": None
            if target is None
            else {"moe": target.moe}
            if target.moe is not None
            else {"moe_table": target.moe_table},
        }


@dataclass(frozen=True)
class Allocation:
    """The budget split of a plan and the composed guarantee of the whole release."""

    accounting: str
    allocation: str
    confidence: float
    total: Guarantee
    tables: tuple[TableBudget, ...]
    required: Guarantee | None = None  # what the accuracy targets need (allocation: targets)
    advice: tuple[str, ...] = ()
    # issue 16: tables with `stat:` and discovered domains (dprelease.accounting.statistics)
    statistics: tuple[StatisticBudget, ...] = ()
    discoveries: tuple[DiscoveryBudget, ...] = ()

    def table(self, name: str) -> TableBudget:
        return next(t for t in self.tables if t.name == name)

    def to_dict(self) -> dict[str, Any]:
        """What `plan --json` prints (contract v1 keys, plus extras)."""
        out: dict[str, Any] = {
            "accounting": self.accounting,
            "allocation": self.allocation,
            "confidence": self.confidence,
            "total": _guarantee_dict(self.total),
            "tables": [t.to_dict() for t in self.tables],
            "advice": list(self.advice),
        }
        if self.statistics or self.discoveries:  # issue 16: statistics are listed as tables
            out["tables"] += [s.to_dict() for s in self.statistics]
            out["discoveries"] = [d.to_dict() for d in self.discoveries]
        if self.required is not None:
            out["required"] = _guarantee_dict(self.required)
        return out


def _guarantee_dict(guarantee: Guarantee) -> dict[str, Any]:
    return {
        "epsilon": guarantee.epsilon,
        "delta": guarantee.delta,
        "rho": guarantee.rho,
        "composition": guarantee.composition,
    }


# --- shares ---------------------------------------------------------------------------


# --- the accountants ---------------------------------------------------------------------


def _required(plan: Plan, fixed: dict[int, float], deltas: Sequence[float]) -> Guarantee:
    """The composed guarantee of the fixed shares alone (what the targets need)."""
    values = list(fixed.values())
    accounting, delta = plan.budget.accounting, plan.budget.delta
    if accounting == "zcdp":
        assert delta is not None
        return zcdp_guarantee(values, delta)
    if accounting == "advanced":
        assert delta is not None
        return advanced_or_basic(values, delta)
    if accounting == "approx":
        return basic_composition(values, [deltas[i] for i in fixed])
    return basic_composition(values)


def _check_targets_fit(plan: Plan, required: Guarantee) -> None:
    budget = plan.budget
    if budget.rho is not None:
        assert required.rho is not None
        if required.rho > budget.rho:
            raise BudgetError(
                f"Budget too small for the targets: they need rho ≥ {required.rho:.6g} but the "
                f"plan gives {budget.rho:g}; raise budget.rho or loosen the targets."
            )
        return
    assert budget.epsilon is not None and required.epsilon is not None
    if required.epsilon > budget.epsilon:
        at = f" at delta {budget.delta:g}" if budget.delta is not None else ""
        raise BudgetError(
            f"Budget too small for the targets: they need epsilon ≥ {required.epsilon:.6g}{at} "
            f"but the plan gives {budget.epsilon:g}; raise budget.epsilon or loosen the targets."
        )


# --- putting it together -------------------------------------------------------------------


def _table_budget(
    plan: Plan, spec: TableSpec, sens: Sensitivity, share: float, delta_share: float
) -> TableBudget:
    """The noise a share buys, and what it costs after rounding the scale up."""
    accounting = plan.budget.accounting
    mechanism = MECHANISM_OF[accounting].name
    epsilon = delta = rho = None
    if accounting == "zcdp":
        noise = Noise(mechanism, discrete_gaussian_sigma(share, sens.l2_squared))
        rho = share
        check_within(discrete_gaussian_rho(noise.scale, sens.l2_squared), Fraction(share), "rho")
    elif accounting == "approx":
        noise = Noise(mechanism, gaussian_sigma(share, delta_share, sens.l2))
        epsilon, delta = share, delta_share
    else:
        noise = Noise(mechanism, laplace_scale(share, sens.l1))
        epsilon = share
        check_within(laplace_epsilon(noise.scale, sens.l1), Fraction(share), "epsilon")
    alpha = 1 - plan.budget.confidence
    cells = spec.cells(plan.schema)
    return TableBudget(
        spec=spec,
        cells=cells,
        sensitivity=sens,
        noise=noise,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        moe=noise.moe(alpha),
        moe_table=noise.moe_table(alpha, cells),
    )


def _compose(plan: Plan, shares: Sequence[float], deltas: Sequence[float]) -> Guarantee:
    """The guarantee of the whole release, checked against the plan's target."""
    budget = plan.budget
    accounting = budget.accounting
    if accounting == "zcdp":
        assert budget.delta is not None
        total_rho, alpha = additive_total(plan)
        check_within(exact_sum(shares), Fraction(total_rho), "rho")
        guarantee = zcdp_guarantee(shares, budget.delta, alpha)
    elif accounting == "advanced":
        assert budget.delta is not None
        guarantee = advanced_or_basic(shares, budget.delta)
    elif accounting == "approx":
        guarantee = basic_composition(shares, deltas)
    else:
        guarantee = Guarantee(epsilon=basic_composition(shares).epsilon, delta=None)
    if budget.epsilon is not None:
        assert guarantee.epsilon is not None
        check_within(Fraction(guarantee.epsilon), Fraction(budget.epsilon), "epsilon")
    return guarantee


def _advice(plan: Plan, total: Guarantee) -> tuple[str, ...]:
    notes = []
    if total.epsilon is not None and total.epsilon > WEAK_EPSILON:
        notes.append(
            f"The release's epsilon is {total.epsilon:.3g}: above {WEAK_EPSILON:g} the "
            "guarantee is weak; consider a smaller budget."
        )
    if plan.budget.allocation != "targets" and any(s.target for s in plan.tables):
        notes.append("Accuracy targets are used only with allocation: targets; they are ignored.")
    if plan.budget.allocation == "equal" and any(s.weight != 1 for s in plan.tables):
        notes.append("Table weights are ignored under allocation: equal.")
    if plan.budget.accounting == "pure" and plan.budget.delta is not None:
        notes.append("budget.delta is ignored under pure accounting (the guarantee has δ = 0).")
    return tuple(notes)


def delta_advice(delta: float | None, rows: int) -> tuple[str, ...]:
    """Advice from the data size (for the data holder: it depends on the true row count).

    δ is the chance that the guarantee fails outright; at δ ≥ 1/n one of n people can expect
    to be exposed, so δ should be far below 1/n.
    """
    if delta is None or rows <= 0 or delta < 1 / rows:
        return ()
    return (
        f"delta = {delta:g} is not far below 1/n for this data set; "
        "use a much smaller delta (e.g. 1e-10).",
    )


def allocate(plan: Plan) -> Allocation:
    """Split the plan's budget, price each table's noise, and compose the whole release."""
    if plan.statistics or plan.discoveries:  # issue 16: their shares come off the total first
        from dprelease.accounting.statistics import allocate_with_statistics

        return allocate_with_statistics(plan, allocate)
    sens = sensitivity(plan.unit, plan.neighbors)
    accounting = plan.budget.accounting
    deltas = delta_shares(plan) if accounting == "approx" else [0.0] * len(plan.tables)
    fixed = fixed_shares(plan, sens, deltas)
    required = None
    if plan.budget.allocation == "targets":
        required = _required(plan, {i: v for i, v in fixed.items()}, deltas)
        _check_targets_fit(plan, required)
    if accounting == "advanced":
        shares = advanced_shares(plan, sens, fixed)
    else:
        shares = additive_shares(plan, sens, fixed, deltas)
    tables = tuple(
        _table_budget(plan, spec, sens, share, delta)
        for spec, share, delta in zip(plan.tables, shares, deltas, strict=True)
    )
    total = _compose(plan, shares, deltas)
    return Allocation(
        accounting=accounting,
        allocation=plan.budget.allocation,
        confidence=plan.budget.confidence,
        total=total,
        tables=tables,
        required=required,
        advice=_advice(plan, total),
    )
