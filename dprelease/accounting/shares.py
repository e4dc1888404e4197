"""Each table's share of the budget, in the accountant's additive unit (ε for pure and advanced,
ρ for zCDP, ε and δ for approx): locked tables keep their value, accuracy targets fix theirs,
the free tables split what is left (equal, weighted or optimal). Float shares are nudged down
until an exact (`Fraction`) sum fits the room (`fit_exactly`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from dprelease.accounting.composition import advanced_or_basic, check_within, exact_sum
from dprelease.accounting.mechanisms import DISCRETE_LAPLACE
from dprelease.accounting.splitting import largest_scale, optimal_laplace_split, power_split
from dprelease.errors import BudgetError, InternalError, quote
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec
from dprelease.plan.table_spec import Target as AccuracyTarget

if TYPE_CHECKING:
    from dprelease.accounting.accountants.base import Accountant
    from dprelease.accounting.accountants.base import Target as Budget


def fit_exactly(shares: list[float], free: Sequence[int], room: Fraction) -> list[float]:
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


def _target_share(
    plan: Plan,
    accountant: Accountant,
    spec: TableSpec,
    target: AccuracyTarget,
    sens: Sensitivity,
    delta_share: float,
) -> float:
    """The smallest share (in the accountant's unit) whose margin of error meets the target."""
    # Aim a hair inside the target, so that the moe reported at α (by us or by OpenDP's
    # accuracy functions) is within it even where a tail probability sits on the boundary.
    alpha = target.alpha((1 - plan.budget.confidence) * (1 - 1e-9), spec.cells(plan.schema))
    return accountant.target_share(target.goal, alpha, sens, delta_share)


def fixed_shares(
    plan: Plan, accountant: Accountant, sens: Sensitivity, deltas: Sequence[float]
) -> dict[int, float]:
    """Shares that the plan fixes: locked tables, and (targets) the tables with a target."""
    fixed: dict[int, float] = {}
    for i, spec in enumerate(plan.tables):
        if spec.rho is not None:
            fixed[i] = spec.rho
        elif spec.epsilon is not None:
            fixed[i] = accountant.lock(spec.epsilon)
        elif plan.budget.allocation == "targets" and spec.target is not None:
            share = _target_share(plan, accountant, spec, spec.target, sens, deltas[i])
            if not math.isfinite(share):
                raise BudgetError(
                    f"Table {quote(spec.name)}: no budget within reason reaches its target; "
                    "loosen the target."
                )
            fixed[i] = share
    return fixed


def delta_shares(plan: Plan, target: Budget) -> list[float]:
    """δ_i for an accountant that splits δ: locked values, the rest split equally."""
    delta = target.delta
    if delta is None:
        raise InternalError("δ is split only under an accountant that has one")
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
    shares = fit_exactly(shares, free, room) if free else shares
    check_within(exact_sum(shares), Fraction(delta), "delta")
    return shares


def additive_shares(
    plan: Plan,
    accountant: Accountant,
    total: float,
    sens: Sensitivity,
    fixed: dict[int, float],
    deltas: Sequence[float],
) -> list[float]:
    """Shares where the additive unit (`total`: ε, or ρ) simply sums."""
    n = len(plan.tables)
    free = [i for i in range(n) if i not in fixed]
    room = Fraction(total) - exact_sum(fixed.values())
    shares = [fixed.get(i, 0.0) for i in range(n)]
    if not free:
        if room < 0:  # every table locked, over the total: the user's to fix, not a bug
            raise BudgetError(
                "The tables' locked budgets add up to more than the plan's total; lower a "
                "lock or raise the total."
            )
        return shares
    if room <= 0:
        raise BudgetError(too_small_message(plan))
    weights = [plan.tables[i].weight for i in free]
    optimal: list[float] | None = None
    if plan.budget.allocation == "optimal" and all(w > 0 for w in weights):
        free_deltas = [deltas[i] for i in free]
        optimal = accountant.optimal_split(weights, free_deltas, sens, float(room))
    for i, share in zip(free, _split_free(plan, free, float(room), optimal), strict=True):
        shares[i] = share
    return fit_exactly(shares, free, room)


def advanced_shares(
    plan: Plan, target: Budget, sens: Sensitivity, fixed: dict[int, float]
) -> list[float]:
    """Shares under advanced composition: scale the free tables' shape until ε is reached.

    For `optimal`, the basic-composition optimum and the shapes w^p (p from 1/5 to 1/2,
    which covers the advanced bound's √Σε² regime) are each scaled to fit; the one with the
    least weighted variance wins.
    """
    epsilon, delta = target.epsilon, target.delta
    if epsilon is None or delta is None:
        raise InternalError("advanced composition needs epsilon and delta")
    n = len(plan.tables)
    free = [i for i in range(n) if i not in fixed]
    base = [fixed.get(i, 0.0) for i in range(n)]
    if free and _advanced_epsilon([v for v in base if v > 0] or [0.0], delta) >= epsilon:
        raise BudgetError(too_small_message(plan))
    if not free:
        return base

    def scaled(shape: Sequence[float]) -> list[float]:
        def fits(c: float) -> bool:
            trial = list(base)
            for i, s in zip(free, shape, strict=True):
                trial[i] = c * s
            return _advanced_epsilon(trial, delta) <= epsilon

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


def _advanced_epsilon(epsilons: Sequence[float], delta: float) -> float:
    """ε of the tighter of basic and advanced composition."""
    return advanced_or_basic(epsilons, delta).epsilon


def too_small_message(plan: Plan) -> str:
    what = "targets and locked tables" if plan.budget.allocation == "targets" else "locked tables"
    return (
        f"The budget is too small: the {what} use all of it and nothing is left for the other "
        "tables; raise the total budget, lower the locks or loosen the targets."
    )
