"""Lifetime composition: an account's releases composed tighter than a sum of ε, under a
privacy *filter* that stays valid when each release is chosen after the earlier ones were seen.

Each charge keeps its privacy curve (`Curve`): pure ε-DP, ρ-zCDP (with the (ε, δ) it was
certified at), or only an (ε, δ) pair. An account's cap (ε_cap, δ_cap) is enforced by three
rules; a release is admitted when, with it, at least one rule holds for the whole account:

- **pure sum** — every charge is pure and Σ ε_i ≤ ε_cap. The privacy loss of every outcome is
  then at most Σ ε_i, surely (no δ).
- **Rényi filter** — no charge is (ε, δ)-only and Σ_i c_i(α) ≤ B, at one Rényi order α fixed by
  the cap, where c_i(α) = α ρ_i for a zCDP release and min(ε_i, α ε_i²/2) for a pure one (ε-DP
  is ε²/2-zCDP, and every Rényi divergence is at most the max-divergence ε). Feldman & Zrnic,
  "Individual privacy accounting via a Rényi filter" (NeurIPS 2021, Thm 3.1; also Whitehouse,
  Ramdas, Rogers & Wu, "Fully-adaptive composition in differential privacy", ICML 2023): the
  adaptively composed releases, stopped by this rule, are (α, B)-RDP. B is the largest value
  whose conversion to (ε, δ) at δ_R = min(δ_cap / 2, 1e-10) (Canonne, Kamath & Steinke 2020,
  Prop. 12 — the conversion the zCDP accountant already uses) is ≤ ε_cap; α is the order at
  which ε_cap's ρ budget is largest.
- **basic filter** — Σ ε_i ≤ ε_cap and Σ δ_i ≤ δ_cap − δ_R over every charge's certified (ε, δ):
  basic composition is a valid filter (Rogers, Roth, Ullman & Vadhan, "Privacy odometers and
  filters", NeurIPS 2016).

Why the rules may be combined: the rules only look at public parameters and each is monotone
(a set that breaks a rule breaks it for every larger set), so each complete history holds at its
end one rule that held at every step, and on those histories the ledger acted exactly as that
rule alone would. Split the outcomes by the first rule that holds at the end: the pure-sum
outcomes have loss ≤ ε_cap surely, the Rényi ones are (ε_cap, δ_R)-DP and the basic ones
(ε_cap, δ_cap − δ_R)-DP, so together (ε_cap, δ_cap)-DP. That is why δ_cap is split between the
two rules that spend δ. δ_R is at most 1e-10, the product's default δ, so that a δ cap left at
its loose default of 1e-3 does not let zCDP releases trade δ for ε.

The composed total the ledger reports (`composed`) is the plain sum while an all-pure account's
sum fits, else the smallest ε of the rules that hold. Sums are exact (`Fraction`) over the
decimals the charges read as (a release spends at most its printed ε, issue 37.4) and rounded
up to a short decimal; a conversion's float formula is pushed up (`zcdp_epsilon_at_order`)
and made at a δ not above the decimal it reports, so no total is ever understated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dprelease.accounting.composition import (
    decimal_cover,
    decimal_down,
    decimal_sum,
    epsilon_to_zcdp,
    round_up,
    spendable,
    typed_value,
    zcdp_epsilon_at_order,
)
from dprelease.errors import BudgetError

Kind = Literal["epsilon", "rho", "epsilon_delta"]  # pure ε-DP, ρ-zCDP, (ε, δ) only
PURE_SUM, RENYI, BASIC = "pure sum", "Rényi filter", "basic filter"


@dataclass(frozen=True)
class Curve:
    """One release's privacy curve: its certified (ε, δ) and, for zCDP, its ρ."""

    kind: Kind
    epsilon: float
    delta: float
    rho: float | None = None


def curve_of(epsilon: float, delta: float, rho: float | None) -> Curve:
    """The curve a charge's stored facts describe: a release certifies a ρ only through
    zCDP (`Guarantee.rho`), and a pure one charges δ = 0."""
    if rho is not None:
        return Curve("rho", epsilon, delta, rho)
    if delta == 0:
        return Curve("epsilon", epsilon, 0.0)
    return Curve("epsilon_delta", epsilon, delta)


@dataclass(frozen=True)
class Composed:
    """A valid total for a set of releases: (ε, δ) and the rule that gives it."""

    epsilon: float
    delta: float
    rule: str


RENYI_DELTA = 1e-10
"""The δ the Rényi filter converts at, at most (the product's default δ): a δ cap left at its
loose default (1e-3) must not let zCDP releases trade δ for ε far above what plans ask."""


def renyi_delta(cap_delta: float) -> float:
    """The δ at which the Rényi filter converts: half the δ cap, at most RENYI_DELTA."""
    return min(cap_delta / 2, RENYI_DELTA)


def basic_delta(cap_delta: float) -> float:
    """The δ the basic filter may spend: what the Rényi filter's conversion leaves (exact,
    rounded down)."""
    return decimal_down(typed_value(cap_delta) - typed_value(renyi_delta(cap_delta)))


def filter_order(cap_epsilon: float, cap_delta: float) -> float | None:
    """The Rényi order α fixed by a cap (None when the cap leaves no zCDP budget)."""
    if not (cap_epsilon > 0 and 0 < cap_delta < 1):
        return None
    try:
        _, alpha = epsilon_to_zcdp(cap_epsilon, renyi_delta(cap_delta))
    except BudgetError:
        return None
    return alpha if math.isfinite(alpha) and alpha > 1 else None


def _best_order(curves: Sequence[Curve], delta: float) -> float | None:
    """For an account without an ε cap: the order that best converts its ρ (display only)."""
    from dprelease.accounting.composition import zcdp_to_epsilon

    rho = float(sum(_rho(curve) for curve in curves))
    if rho <= 0:
        return None
    try:
        _, alpha = zcdp_to_epsilon(rho, delta)
    except BudgetError:
        return None
    return alpha


def _rho(curve: Curve) -> Fraction:
    if curve.kind == "rho":
        assert curve.rho is not None
        return typed_value(curve.rho)
    return typed_value(curve.epsilon) ** 2 / 2


def renyi_cost(curve: Curve, alpha: float) -> Fraction:
    """c(α): the release's Rényi divergence bound at order α (exact)."""
    order = Fraction(alpha)
    if curve.kind == "rho":
        assert curve.rho is not None
        return order * typed_value(curve.rho)
    epsilon = typed_value(curve.epsilon)
    return min(epsilon, order * epsilon**2 / 2)


def _renyi_epsilon(curves: Sequence[Curve], alpha: float, delta: float) -> float:
    """The (ε, δ) conversion of Σ c_i(α), rounded up (0 for no cost)."""
    total = sum((renyi_cost(curve, alpha) for curve in curves), Fraction(0))
    if total == 0:
        return 0.0
    # zcdp_epsilon_at_order converts α·ρ; pass ρ = total/α so that α·ρ is the total.
    rho = round_up(total / Fraction(alpha))
    # at the float below δ's decimal: the reported δ (that decimal) then bounds the one used
    return decimal_cover(max(zcdp_epsilon_at_order(rho, spendable(delta), alpha), 0.0))


def totals(curves: Sequence[Curve], cap_epsilon: float | None, cap_delta: float) -> list[Composed]:
    """Every rule's total for these releases (the rules that apply to their kinds)."""
    epsilon_sum = decimal_sum(curve.epsilon for curve in curves)
    delta_sum = decimal_sum(curve.delta for curve in curves)
    found = [Composed(epsilon_sum, delta_sum, BASIC)]
    if all(curve.kind == "epsilon" for curve in curves):
        found.append(Composed(epsilon_sum, 0.0, PURE_SUM))
    if curves and all(curve.kind != "epsilon_delta" for curve in curves):
        delta = renyi_delta(cap_delta)
        alpha = (
            filter_order(cap_epsilon, cap_delta)
            if cap_epsilon is not None
            else _best_order(curves, delta)
        )
        if alpha is not None:
            found.append(Composed(_renyi_epsilon(curves, alpha, delta), delta, RENYI))
    return found


def _holds(total: Composed, cap_epsilon: float | None, cap_delta: float) -> bool:
    within_epsilon = cap_epsilon is None or total.epsilon <= cap_epsilon
    if total.rule == PURE_SUM:
        return within_epsilon
    if total.rule == RENYI:
        return within_epsilon  # its δ is fixed by the cap
    return within_epsilon and total.delta <= basic_delta(cap_delta)


def composed(curves: Sequence[Curve], cap_epsilon: float | None, cap_delta: float) -> Composed:
    """The tightest valid total: the smallest ε of the rules that hold (of all that apply, if
    none holds: a cap lowered below the spend), ties to the smaller δ."""
    if not curves:
        return Composed(0.0, 0.0, PURE_SUM)
    found = totals(curves, cap_epsilon, cap_delta)
    holding = [total for total in found if _holds(total, cap_epsilon, cap_delta)] or found
    pure = [total for total in holding if total.rule == PURE_SUM]
    # δ = 0 is the stronger kind of statement: a pure account reads as a plain sum while
    # the sum fits (the Rényi total may have a smaller ε, but at δ_cap / 2).
    return pure[0] if pure else min(holding, key=lambda total: (total.epsilon, total.delta))


def admits(curves: Sequence[Curve], cap_epsilon: float | None, cap_delta: float) -> bool:
    """Whether the account may hold these releases (the earlier ones and a new one)."""
    found = totals(curves, cap_epsilon, cap_delta)
    return any(_holds(total, cap_epsilon, cap_delta) for total in found)
