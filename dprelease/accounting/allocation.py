"""Splitting the total budget across tables, and what each share buys (no data needed).

`allocate(plan)` is what `dprelease plan` prints: per table its budget, mechanism, noise and
margin of error, and the composed guarantee of the whole release. Shares are computed in the
accountant's additive unit (ε for pure/advanced, ρ for zCDP, ε and δ for approx); locked
tables keep their value and the others share what is left. Float shares are then nudged down
until an exact (`Fraction`) sum fits the total, and the composed total is checked once more,
so an allocation can never spend more than the plan's target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dprelease.accounting.composition import (
    Guarantee,
    advanced_or_basic,
    basic_composition,
    check_within,
    epsilon_to_zcdp,
    exact_sum,
    pure_to_zcdp,
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
    gaussian_moe,
    gaussian_sigma,
    laplace_epsilon,
    laplace_scale,
)
from dprelease.accounting.splitting import (
    largest_scale,
    optimal_gaussian_split,
    optimal_laplace_split,
    power_split,
    smallest_share,
)
from dprelease.errors import BudgetError, quote
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec, sensitivity

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


def _fit_exactly(shares: list[float], free: Sequence[int], room: Fraction) -> list[float]:
    """Nudge the free shares down by ulps until their exact sum is at most `room`."""
    shares = list(shares)
    for _ in range(64):
        if exact_sum(shares[i] for i in free) <= room:
            return shares
        for i in free:
            shares[i] = math.nextafter(shares[i], 0.0)
    raise BudgetError("The budget is too small to split among the tables.")


def _split_free(
    plan: Plan, free: Sequence[int], room: float, optimal: Sequence[float] | None
) -> list[float]:
    """Shares of the free tables under the plan's allocation (targets: by weight)."""
    method = plan.budget.allocation
    if method == "equal":
        return [room / len(free)] * len(free)
    weights = [plan.tables[i].weight for i in free]
    zero = [plan.tables[i].name for i, w in zip(free, weights, strict=True) if w == 0]
    if zero:
        raise BudgetError(
            f"Table {quote(zero[0])} has weight 0 and would get no budget; "
            "give it a weight above 0 or remove it."
        )
    if method == "optimal" and optimal is not None:
        return list(optimal)
    return power_split(weights, 1.0, room)


def _target_share(plan: Plan, spec: TableSpec, sens: Sensitivity, delta_share: float) -> float:
    """The smallest share (ε, or ρ for zCDP) whose margin of error meets the table's target."""
    assert spec.target is not None
    # Aim a hair inside the target, so that the moe reported at α (by us or by OpenDP's
    # accuracy functions) is within it even where a tail probability sits on the boundary.
    alpha = (1 - plan.budget.confidence) * (1 - 1e-9)
    if spec.target.moe_table is not None:
        alpha, goal = alpha / spec.cells(plan.schema), spec.target.moe_table
    else:
        assert spec.target.moe is not None
        goal = spec.target.moe
    accounting = plan.budget.accounting
    if accounting == "zcdp":
        return smallest_share(
            lambda rho: (
                Noise(DISCRETE_GAUSSIAN.name, discrete_gaussian_sigma(rho, sens.l2_squared)).moe(
                    alpha
                )
                <= goal
            ),
            0.01,
        )
    if accounting == "approx":
        sigma_needed = goal / gaussian_moe(1.0, alpha)
        return smallest_share(
            lambda eps: gaussian_sigma(eps, delta_share, sens.l2) <= sigma_needed, 0.1
        )
    return smallest_share(
        lambda eps: DISCRETE_LAPLACE.moe(laplace_scale(eps, sens.l1), alpha) <= goal,
        0.1,
    )


def _fixed_shares(plan: Plan, sens: Sensitivity, delta_shares: Sequence[float]) -> dict[int, float]:
    """Shares that the plan fixes: locked tables, and (targets) the tables with a target."""
    fixed: dict[int, float] = {}
    accounting = plan.budget.accounting
    for i, spec in enumerate(plan.tables):
        if spec.rho is not None:
            fixed[i] = spec.rho
        elif spec.epsilon is not None:
            fixed[i] = pure_to_zcdp(spec.epsilon) if accounting == "zcdp" else spec.epsilon
        elif plan.budget.allocation == "targets" and spec.target is not None:
            share = _target_share(plan, spec, sens, delta_shares[i])
            if not math.isfinite(share):
                raise BudgetError(
                    f"Table {quote(spec.name)}: no budget within reason reaches its target; "
                    "loosen the target."
                )
            fixed[i] = share
    return fixed


def _delta_shares(plan: Plan) -> list[float]:
    """δ_i for approx accounting: locked values, the rest split equally."""
    delta = plan.budget.delta
    assert delta is not None
    locked = {i: s.delta for i, s in enumerate(plan.tables) if s.delta is not None}
    free = [i for i in range(len(plan.tables)) if i not in locked]
    room = Fraction(delta) - exact_sum(locked.values())
    if room <= 0 and free:
        raise BudgetError(
            "The locked deltas use all of budget.delta; lower them or raise budget.delta."
        )
    shares = [0.0] * len(plan.tables)
    for i, value in locked.items():
        shares[i] = float(value)
    for i in free:
        shares[i] = float(room) / len(free)
    shares = _fit_exactly(shares, free, room) if free else shares
    check_within(exact_sum(shares), Fraction(delta), "delta")
    return shares


# --- the accountants ---------------------------------------------------------------------


def _additive_total(plan: Plan) -> tuple[float, float | None]:
    """The total in the additive unit (ε, or ρ for zCDP), and the CKS order behind ρ."""
    budget = plan.budget
    if budget.accounting != "zcdp":
        assert budget.epsilon is not None
        return budget.epsilon, None
    if budget.rho is not None:
        return budget.rho, None
    assert budget.epsilon is not None and budget.delta is not None
    return epsilon_to_zcdp(budget.epsilon, budget.delta)


def _additive_shares(
    plan: Plan, sens: Sensitivity, fixed: dict[int, float], deltas: Sequence[float]
) -> list[float]:
    """Shares for pure, approx and zCDP, where the additive unit simply sums."""
    total, _ = _additive_total(plan)
    n = len(plan.tables)
    free = [i for i in range(n) if i not in fixed]
    room = Fraction(total) - exact_sum(fixed.values())
    shares = [fixed.get(i, 0.0) for i in range(n)]
    if not free:
        return shares
    if room <= 0:
        raise BudgetError(_too_small_message(plan))
    weights = [plan.tables[i].weight for i in free]
    optimal: list[float] | None = None
    if plan.budget.allocation == "optimal" and all(w > 0 for w in weights):
        if plan.budget.accounting == "zcdp":
            optimal = power_split(weights, 0.5, float(room))
        elif plan.budget.accounting == "approx":
            free_deltas = [deltas[i] for i in free]
            optimal = optimal_gaussian_split(weights, free_deltas, sens.l2, float(room))
        else:
            optimal = optimal_laplace_split(weights, sens.l1, float(room))
    for i, share in zip(free, _split_free(plan, free, float(room), optimal), strict=True):
        shares[i] = share
    return _fit_exactly(shares, free, room)


def _advanced_shares(plan: Plan, sens: Sensitivity, fixed: dict[int, float]) -> list[float]:
    """Shares under advanced composition: scale the free tables' shape until ε is reached.

    For `optimal`, the basic-composition optimum and the shapes w^p (p from 1/5 to 1/2,
    which covers the advanced bound's √Σε² regime) are each scaled to fit; the one with the
    least weighted variance wins.
    """
    epsilon, delta = plan.budget.epsilon, plan.budget.delta
    assert epsilon is not None and delta is not None
    n = len(plan.tables)
    free = [i for i in range(n) if i not in fixed]
    base = [fixed.get(i, 0.0) for i in range(n)]
    if free and advanced_or_basic([v for v in base if v > 0] or [0.0], delta).epsilon >= epsilon:  # type: ignore[operator]
        raise BudgetError(_too_small_message(plan))
    if not free:
        return base

    def scaled(shape: Sequence[float]) -> list[float]:
        def fits(c: float) -> bool:
            trial = list(base)
            for i, s in zip(free, shape, strict=True):
                trial[i] = c * s
            return advanced_or_basic(trial, delta).epsilon <= epsilon  # type: ignore[operator]

        c = largest_scale(fits, start=epsilon / max(math.fsum(shape), 1e-300))
        out = list(base)
        for i, s in zip(free, shape, strict=True):
            out[i] = c * s
        return out

    weights = [plan.tables[i].weight for i in free]
    if plan.budget.allocation != "optimal":
        return scaled(_split_free(plan, free, 1.0, None))
    _split_free(plan, free, 1.0, None)  # the weight checks
    shapes = [optimal_laplace_split(weights, sens.l1, 1.0)]
    shapes += [power_split(weights, p, 1.0) for p in (0.2, 0.25, 0.3, 0.4, 0.5)]
    candidates = [scaled(shape) for shape in shapes]

    def cost(shares: list[float]) -> float:
        return math.fsum(
            plan.tables[i].weight * DISCRETE_LAPLACE.variance(sens.l1 / shares[i]) for i in free
        )

    return min(candidates, key=cost)


def _too_small_message(plan: Plan) -> str:
    what = "targets and locked tables" if plan.budget.allocation == "targets" else "locked tables"
    return (
        f"The budget is too small: the {what} use all of it and nothing is left for the other "
        "tables; raise the total budget, lower the locks or loosen the targets."
    )


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
        total_rho, alpha = _additive_total(plan)
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
    sens = sensitivity(plan.unit, plan.neighbors)
    accounting = plan.budget.accounting
    deltas = _delta_shares(plan) if accounting == "approx" else [0.0] * len(plan.tables)
    fixed = _fixed_shares(plan, sens, deltas)
    required = None
    if plan.budget.allocation == "targets":
        required = _required(plan, {i: v for i, v in fixed.items()}, deltas)
        _check_targets_fit(plan, required)
    if accounting == "advanced":
        shares = _advanced_shares(plan, sens, fixed)
    else:
        shares = _additive_shares(plan, sens, fixed, deltas)
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
