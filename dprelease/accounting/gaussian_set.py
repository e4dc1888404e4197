"""`approx` accounting with the tables measured as listed: all of them are one Gaussian mechanism.

k Gaussian measurements of one person's contribution (L2 sensitivity Δ₂ each) compose exactly
into one Gaussian mechanism of sensitivity √(Σ Δ₂²/σ_i²) at noise 1 (issue 10). So the budget
is a single room R = 1/σ*², σ* the analytic-Gaussian σ of sensitivity 1 at the plan's (ε, δ)
(Balle & Wang 2018, `gaussian_sigma`), and each table takes a share u_i = Δ₂²/σ_i² with
Σ u_i ≤ R, checked exactly. Adding per-table ε and δ (basic composition) would waste about
3.4× in noise standard deviation on a dozen tables.

- locked tables: `epsilon:` (with the table's `delta:`, else the plan's δ) keeps the noise of
  a Gaussian calibrated alone at that (ε_i, δ_i): u_i = Δ₂²/σ(ε_i, δ_i)²;
- targets: the σ that meets the margin of error;
- the others split what is left: `equal` evenly, `weighted` ∝ weight, `optimal` minimises
  Σ w_i σ_i² = Σ w_i Δ₂²/u_i, so u_i ∝ √w_i.

The noise drawn is the discrete Gaussian: the σ_i above (the analytic Gaussian's, which is a
theorem about continuous noise only) are multiplied by the least common factor c ≥ 1 for which
the PLD of the discrete Gaussians certifies (ε, δ) (`dgauss_pld.certify`; c is 1 or a fraction
of a percent above). Locks and targets keep their σ (a target's is the largest whose discrete
margin of error meets it); only the other tables' σ's are scaled.

Each table reports ε_i: what its discrete Gaussian alone is certified for at the plan's δ;
the release's ε is that of the certified set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from dprelease.accounting.accountants.base import Target
from dprelease.accounting.bisection import threshold
from dprelease.accounting.composition import Guarantee, check_within
from dprelease.accounting.dgauss_pld import alone_epsilon, certify, set_epsilon
from dprelease.accounting.mechanisms import gaussian_moe, gaussian_sigma
from dprelease.accounting.mechanisms.discrete_gaussian import discrete_gaussian_moe
from dprelease.accounting.shares import fit_exactly, too_small_message
from dprelease.errors import BudgetError, quote
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Sensitivity, TableSpec


@dataclass(frozen=True)
class GaussianSet:
    """Each table's σ, the composed guarantee and what the targets alone need."""

    sigmas: tuple[float, ...]
    total: Guarantee
    required: Guarantee | None


def _sigma_of_share(share: float, sens: Sensitivity) -> float:
    """The smallest float σ with Δ₂²/σ² ≤ share exactly."""
    sigma = math.sqrt(sens.l2_squared / share)
    while Fraction(sens.l2_squared) / Fraction(sigma) ** 2 > Fraction(share):
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def _target_sigma(plan: Plan, spec: TableSpec) -> float:
    """The largest σ (up to a hair) whose margin of error meets the table's target."""
    target = spec.target
    if target is None:
        raise BudgetError(f"Table {quote(spec.name)} has no target.")
    alpha = target.alpha((1 - plan.budget.confidence) * (1 - 1e-9), spec.cells(plan.schema))
    goal = target.goal
    # the noise drawn is the discrete Gaussian, whose margin is a whole number: search it
    continuous = goal / gaussian_moe(1.0, alpha)
    low, _ = threshold(lambda s: discrete_gaussian_moe(s, alpha) > goal, 0.0, 2 * continuous)
    if low <= 0:
        raise BudgetError(f"Table {quote(spec.name)}: its target is below one count; loosen it.")
    return low


def _fixed_shares(plan: Plan, sens: Sensitivity, target: Target) -> dict[int, float]:
    delta = target.epsilon_delta()[1]
    fixed: dict[int, float] = {}
    for i, spec in enumerate(plan.tables):
        if spec.epsilon is not None:
            sigma = gaussian_sigma(spec.epsilon, spec.delta or delta, sens.l2)
        elif plan.budget.allocation == "targets" and spec.target is not None:
            sigma = _target_sigma(plan, spec)
        else:
            continue
        # u rounded up: the fixed tables never take less room than their noise needs
        fixed[i] = math.nextafter(sens.l2_squared / sigma**2, math.inf)
    return fixed


def _free_shares(plan: Plan, free: Sequence[int], room: float) -> list[float]:
    method = plan.budget.allocation
    if method == "equal":
        return [room / len(free)] * len(free)
    weights = [plan.tables[i].weight for i in free]
    if any(w <= 0 for w in weights):
        name = plan.tables[free[weights.index(min(weights))]].name
        raise BudgetError(
            f"Table {quote(name)} has weight 0 and would get no budget; "
            "give it a weight above 0 or remove it."
        )
    shape = [math.sqrt(w) for w in weights] if method == "optimal" else list(weights)
    return [room * s / math.fsum(shape) for s in shape]


def continuous_variances(plan: Plan, sens: Sensitivity, target: Target) -> list[float] | None:
    """Each table's noise variance before certification (the analytic Gaussian's σ², which
    certification only raises): a lower bound that costs no PLD. None with locks or targets."""
    epsilon, delta = target.epsilon_delta()
    if _fixed_shares(plan, sens, target):
        return None
    room = 1 / gaussian_sigma(epsilon, delta, 1.0) ** 2
    shares = _free_shares(plan, range(len(plan.tables)), room)
    return [sens.l2_squared / u for u in shares]


def gaussian_set(plan: Plan, sens: Sensitivity, target: Target) -> GaussianSet:
    """σ per table so that the tables together are (ε, δ)-DP as one Gaussian mechanism."""
    epsilon, delta = target.epsilon_delta()
    room = 1 / Fraction(gaussian_sigma(epsilon, delta, 1.0)) ** 2
    fixed = _fixed_shares(plan, sens, target)
    required = None
    if plan.budget.allocation == "targets":
        needed = [math.sqrt(sens.l2_squared / u) for u in fixed.values()]
        need = set_epsilon(needed, sens, delta) if needed else 0.0
        required = Guarantee(epsilon=need, delta=delta, composition="pld")
        if need > epsilon:
            raise BudgetError(
                f"Budget too small for the targets: they need epsilon ≥ {need:.6g} at delta "
                f"{delta:g} but the plan gives {epsilon:g}; raise budget.epsilon "
                "or loosen the targets."
            )
    free = [i for i in range(len(plan.tables)) if i not in fixed]
    left = room - sum((Fraction(v) for v in fixed.values()), Fraction(0))
    if left <= 0 and free:
        raise BudgetError(too_small_message(plan))
    shares = [fixed.get(i, 0.0) for i in range(len(plan.tables))]
    if free:
        for i, share in zip(free, _free_shares(plan, free, float(left)), strict=True):
            shares[i] = share
        shares = fit_exactly(shares, free, left)
    sigmas = tuple(_sigma_of_share(u, sens) for u in shares)
    spent = sum((Fraction(sens.l2_squared) / Fraction(s) ** 2 for s in sigmas), Fraction(0))
    if spent > room:  # only locks or targets can ask for more than there is
        raise BudgetError(too_small_message(plan))
    check_within(spent, room, "gaussian sensitivity")
    keep = [i in fixed for i in range(len(sigmas))]  # locks and targets keep their noise
    found = certify(sigmas, sens, epsilon, delta, keep)
    total = Guarantee(epsilon=found.epsilon, delta=delta, composition=found.method)
    return GaussianSet(found.sigmas, total, required)


def table_epsilon(sigma: float, sens: Sensitivity, delta: float) -> float:
    """What one table's discrete Gaussian alone is certified for at δ."""
    return alone_epsilon(sigma, sens, delta)
