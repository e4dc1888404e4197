"""What a budget buys, before any data is touched: the numbers behind the Budget page's charts.

- `moe_curves`: each table's margin of error as the total budget varies (the plan re-allocated
  at every point, so locks, weights and the chosen split all count; a plan with statistics by
  the allocator it is handed, `dprelease.stats.allocation.allocate`);
- `compare_accountants`: the noise the plan adds, composed under every accountant, so the
  user sees which one certifies the smallest ε for exactly the same noise;
- `epsilon_delta_curve`: the (ε, δ) pairs a zCDP budget implies;
- `compare_scenarios`: saved what-if allocations side by side.

Everything here is public arithmetic on the plan; nothing reads data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprelease.accounting.accountants.base import UNIT_SYMBOLS
from dprelease.accounting.accountants.renyi import renyi_epsilon
from dprelease.accounting.allocation import Allocation, TableBudget, allocate
from dprelease.accounting.composition import (
    advanced_composition_epsilon,
    exact_sum,
    kov_epsilon,
    round_up,
    zcdp_to_epsilon,
)
from dprelease.accounting.mechanisms import (
    gaussian_epsilon,
)
from dprelease.errors import DPReleaseError, quote
from dprelease.plan.model import Plan

CURVE_POINTS = 13
CURVE_SPAN = 10.0  # the curve runs from budget / span to budget × span


@dataclass(frozen=True)
class MoeCurve:
    """Each table's per-cell margin of error at each total budget (NaN where it does not fit)."""

    unit: str  # the plan's `Budget.total_field`: what the budget axis measures

    @property
    def symbol(self) -> str:
        """The axis's letter for people (ε, or ρ)."""
        return UNIT_SYMBOLS[self.unit]

    budgets: tuple[float, ...]
    current: float
    moe: Mapping[str, tuple[float, ...]]


def moe_curves(
    plan: Plan,
    points: int = CURVE_POINTS,
    span: float = CURVE_SPAN,
    *,
    allocator: Callable[[Plan], Allocation] = allocate,
) -> MoeCurve:
    """Re-allocate the plan at log-spaced totals around its own and read off every MoE.

    `allocator` allocates the plan at each total: the count tables' `allocate` by default; a
    plan with statistics or discoveries needs `dprelease.stats.allocation.allocate`, whose
    shares come off each total first."""
    unit, current = plan.budget.total_field, plan.budget.total
    budgets = tuple(float(b) for b in np.geomspace(current / span, current * span, points))
    moe: dict[str, list[float]] = {spec.name: [] for spec in plan.tables}
    for total in budgets:
        try:
            allocation = allocator(dataclasses.replace(plan, budget=plan.budget.with_total(total)))
        except DPReleaseError:  # too small for the locks or targets, or above the limit
            for values in moe.values():
                values.append(math.nan)
            continue
        for table in allocation.tables:
            moe[table.name].append(table.moe)
    return MoeCurve(unit, budgets, current, {k: tuple(v) for k, v in moe.items()})


# --- the same noise under every accountant ---------------------------------------------------


@dataclass(frozen=True)
class AccountantBound:
    """The ε one accountant certifies at δ for the plan's noise (None: it cannot)."""

    accountant: str
    epsilon: float | None
    delta: float
    note: str


def _pure_epsilons(tables: Sequence[TableBudget]) -> list[float] | None:
    """Each table's pure ε, rounded up; None when some table's noise has no pure ε."""
    exact = [t.noise.kind.pure_epsilon(t.noise.scale, t.sensitivity) for t in tables]
    return None if any(e is None for e in exact) else [round_up(e) for e in exact if e is not None]


def _rhos(tables: Sequence[TableBudget]) -> list[float]:
    return [t.noise.kind.zcdp_rho(t.noise.scale, t.sensitivity) for t in tables]


def _share_epsilons(tables: Sequence[TableBudget], delta_each: float) -> list[float]:
    """Each table's ε at its δ share (continuous Gaussian: exact; otherwise via zCDP)."""
    return [t.noise.kind.epsilon_at(t.noise.scale, t.sensitivity, delta_each) for t in tables]


def compare_accountants(allocation: Allocation, delta: float) -> list[AccountantBound]:
    """The plan's noise, measurement by measurement as allocated, composed under each
    accountant at δ (under strategy auto the measurements, not the derived tables)."""
    tables = allocation.measurements
    k = len(tables)
    epsilons = _pure_epsilons(tables)
    rows: list[AccountantBound] = []
    if epsilons is not None:
        basic = round_up(exact_sum(epsilons))
        rows.append(AccountantBound("pure (basic composition)", basic, 0.0, "Σ ε_i, δ = 0"))
        rows.append(
            AccountantBound(
                "advanced composition",
                advanced_composition_epsilon(epsilons, delta),
                delta,
                "Dwork–Rothblum–Vadhan, heterogeneous",
            )
        )
        rows.append(
            AccountantBound(
                "optimal composition (KOV)",
                min(kov_epsilon(max(epsilons), k, delta), basic),
                delta,
                "exact for k tables at the largest ε_i; never above basic",
            )
        )
    else:
        rows.append(
            AccountantBound("pure (basic composition)", None, 0.0, "Gaussian noise has no pure ε")
        )
        share = delta / (2 * k)
        per_table = _share_epsilons(tables, share)
        rows.append(
            AccountantBound(
                "approx (basic composition)",
                round_up(exact_sum(_share_epsilons(tables, delta / k))),
                delta,
                "Σ ε_i, each table at δ/k",
            )
        )
        rows.append(
            AccountantBound(
                "advanced composition",
                advanced_composition_epsilon(per_table, delta / 2),
                delta,
                "each table at δ/(2k), slack δ/2",
            )
        )
    rho = round_up(exact_sum(_rhos(tables)))
    rows.append(
        AccountantBound("zCDP", zcdp_to_epsilon(rho, delta)[0], delta, f"Σ ρ_i = {rho:.4g}")
    )
    curves = [
        (None if e is None else Fraction(e), Fraction(r))
        for e, r in zip(
            [t.noise.kind.pure_epsilon(t.noise.scale, t.sensitivity) for t in tables],
            _rhos(tables),
            strict=True,
        )
    ]
    rows.append(
        AccountantBound(
            "Rényi DP (α grid)",
            renyi_epsilon(curves, delta),
            delta,
            "each table min(ε_i, αρ_i), added order by order",
        )
    )
    if all(t.noise.kind.composes_as_gaussian for t in tables):
        sigmas = [t.noise.scale for t in tables]
        rows.append(
            AccountantBound(
                "exact Gaussian (PLD)",
                gaussian_epsilon(sigmas, delta, tables[0].sensitivity.l2),
                delta,
                "tight: Gaussians compose to one Gaussian",
            )
        )
    elif allocation.accountant.priced_as_set and all(
        t.noise.mechanism == allocation.accountant.mechanism.name for t in tables
    ):
        # approx draws the discrete Gaussian: its PLD is what the release is certified by
        # (dp-accounting is already loaded for approx; zcdp plans do not pay its import here)
        from dprelease.accounting.dgauss_pld import set_epsilon

        rows.append(
            AccountantBound(
                "discrete Gaussian (PLD)",
                set_epsilon([t.noise.scale for t in tables], tables[0].sensitivity, delta),
                delta,
                "what approx certifies: the discrete Gaussians' own privacy loss",
            )
        )
    return rows


def epsilon_delta_curve(rho: float, deltas: Sequence[float]) -> list[float]:
    """ε at each δ implied by ρ-zCDP (the CKS conversion, rounded up)."""
    return [zcdp_to_epsilon(rho, d)[0] for d in deltas]


def compare_scenarios(scenarios: Mapping[str, Allocation]) -> list[dict[str, object]]:
    """One row per table (the union over scenarios): its per-cell MoE in each scenario,
    then the total ε of each scenario."""
    names: list[str] = []
    for allocation in scenarios.values():
        names.extend(t.name for t in allocation.tables if t.name not in names)
    rows: list[dict[str, object]] = []
    for name in names:
        row: dict[str, object] = {"table": name}
        for label, allocation in scenarios.items():
            found = [t for t in allocation.tables if t.name == name]
            row[label] = found[0].moe if found else None
        rows.append(row)
    total: dict[str, object] = {"table": "total ε"}
    for label, allocation in scenarios.items():
        total[label] = allocation.total.epsilon
    rows.append(total)
    return rows


def typical_cell_advice(allocation: Allocation, rows: int) -> tuple[str, ...]:
    """Advice for the data holder (it uses the true row count, so it stays on their screen):
    tables whose per-cell margin of error exceeds their average cell, rows / cells."""
    notes = []
    for table in allocation.tables:
        if not table.cells:  # a discovered domain: its cells are known at release only
            continue
        typical = rows / table.cells
        if table.moe > typical:
            notes.append(
                f"Table {quote(table.name)}: the margin of error ({table.moe:.3g}) exceeds its "
                f"average cell ({typical:.3g}), so most cells will be mostly noise; give it "
                "more budget or weight, or fewer cells."
            )
    return tuple(notes)
