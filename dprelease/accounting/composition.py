"""Privacy accounting: composing per-table budgets and converting between definitions.

Every function returns a bound that is valid, never an optimistic estimate: exact sums are
done with `fractions.Fraction`, and floating-point formulas are rounded up by a few ulps.

- basic composition: ε = Σ ε_i, δ = Σ δ_i (exact).
- advanced composition (Dwork–Rothblum–Vadhan 2010, heterogeneous form):
  ε = √(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), δ = Σ δ_i + δ'.
- optimal homogeneous composition of k ε₀-DP mechanisms (Kairouz–Oh–Viswanath 2015): the
  exact sum (Thm 3.3) and its closed-form bound (Thm 3.4).
- zCDP: ρ adds up; ρ-zCDP → (ε, δ) by the Canonne–Kamath–Steinke 2020 bound
  ε(δ) = min over α > 1 of  αρ + (ln(1/δ) + (α−1) ln(α−1) − α ln α) / (α − 1);
  ε-DP → ε²/2-zCDP.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

from dprelease.accounting.bisection import threshold
from dprelease.accounting.precise import cks_epsilon_upper
from dprelease.errors import BudgetError, InternalError

_SAFETY_ULPS = 8  # how far float formulas are pushed up to cover their rounding error


def round_up(value: Fraction) -> float:
    """The smallest float that is ≥ an exact value."""
    result = float(value)
    if Fraction(result) < value:
        result = math.nextafter(result, math.inf)
    return result


def round_down(value: Fraction) -> float:
    """The largest float that is ≤ an exact value."""
    result = float(value)
    if Fraction(result) > value:
        result = math.nextafter(result, -math.inf)
    return result


def decimal_cover(value: float) -> float:
    """`value` or the float above it, whichever first bounds `value` read either way, as a
    float and as the decimal it prints as: a computed total (a composed ε, a ρ) before it is
    reported or charged, since the ledger adds what it reads (issue 37.4)."""
    while typed_value(value) < Fraction(value):  # one or two steps; a fixed point after
        value = math.nextafter(value, math.inf)
    return value


def typed_value(value: float) -> Fraction:
    """The exact decimal a float reads as (its shortest repr, Python's and JSON's): what a
    person typed. Budgets are decimals (issue 37.4): a plan's ε = 0.4 grants exactly 2/5,
    and the ledger adds 0.4 + 1.0 as 7/5, not as the binary floats' 1.4000000000000000222."""
    return Fraction(repr(float(value)))


def spendable(value: float) -> float:
    """The largest float ≤ the decimal a budget was typed as: what an allocation may spend so
    that the typed decimal bounds the spend (0.4's float is 2e-17 above 2/5)."""
    return round_down(typed_value(value))


def decimal_up(value: Fraction, digits: int = 15) -> float:
    """The smallest decimal of at most `digits` significant digits that is ≥ an exact value,
    as the float that prints as it: 7/5 → 1.4, not 1.4000000000000001 (a total, a spend)."""
    return _decimal_rounded(value, digits, ROUND_CEILING)


def decimal_down(value: Fraction, digits: int = 15) -> float:
    """The largest such decimal ≤ an exact value: what is left of a cap (1/10 → 0.1)."""
    return _decimal_rounded(value, digits, ROUND_FLOOR)


def decimal_sum(values: Iterable[float]) -> float:
    """Budgets added as the decimals they read as, rounded up to one that reads as little:
    0.4 + 1.0 is 1.4 (the ledger's spend; issue 37.4)."""
    return decimal_up(sum((typed_value(v) for v in values), Fraction(0)))


def _decimal_rounded(value: Fraction, digits: int, rounding: str) -> float:
    if value == 0:
        return 0.0
    context = Context(prec=digits, rounding=rounding)
    # ≤ 15 significant digits survive the float: repr prints the same decimal back
    return float(context.divide(Decimal(value.numerator), Decimal(value.denominator)))


def push_up(value: float, ulps: int = _SAFETY_ULPS) -> float:
    """A float formula's result, moved up by a few ulps to cover its rounding error."""
    for _ in range(ulps):
        value = math.nextafter(value, math.inf)
    return value


def exact_sum(values: Iterable[float]) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


@dataclass(frozen=True)
class Guarantee:
    """A composed privacy guarantee: ε always; δ and ρ are None where they do not apply.

    `composition` names the bound used ("basic", "advanced", "zcdp", "gaussian").
    """

    epsilon: float
    delta: float | None
    rho: float | None = None
    composition: str = "basic"


# --- basic and advanced composition -----------------------------------------------------


def basic_composition(epsilons: Sequence[float], deltas: Sequence[float] = ()) -> Guarantee:
    """ε = Σ ε_i and δ = Σ δ_i, summed exactly and rounded up."""
    delta = round_up(exact_sum(deltas)) if deltas else None
    return Guarantee(epsilon=round_up(exact_sum(epsilons)), delta=delta, composition="basic")


def advanced_composition_epsilon(epsilons: Sequence[float], delta_slack: float) -> float:
    """Heterogeneous advanced composition of ε_i-DP mechanisms at slack δ' (rounded up)."""
    if not 0 < delta_slack < 1:
        raise BudgetError(f"delta must lie strictly between 0 and 1, got {delta_slack!r}.")
    squares = math.fsum(e * e for e in epsilons)
    drift = math.fsum(e * math.expm1(e) for e in epsilons)
    return push_up(math.sqrt(2 * math.log(1 / delta_slack) * squares) + drift)


def advanced_or_basic(epsilons: Sequence[float], delta: float) -> Guarantee:
    """The tighter of basic composition (δ = 0) and advanced composition at δ' = δ."""
    basic = basic_composition(epsilons)
    advanced = advanced_composition_epsilon(epsilons, delta)
    if basic.epsilon <= advanced:
        return Guarantee(epsilon=basic.epsilon, delta=0.0, composition="basic")
    return Guarantee(epsilon=advanced, delta=delta, composition="advanced")


def kov_delta(epsilon0: float, k: int, epsilon: float) -> float:
    """δ of the optimal k-fold composition of ε₀-DP mechanisms at ε (KOV 2015, Thm 3.3).

    δ = Σ_{i ≥ (ε + kε₀)/(2ε₀)} C(k, i) (e^{iε₀} − e^{ε} e^{(k−i)ε₀}) / (1 + e^{ε₀})^k,
    summed in log space so that large k does not overflow.
    """
    total = 0.0
    log_norm = k * math.log1p(math.exp(epsilon0))
    start = max(0, math.ceil((epsilon + k * epsilon0) / (2 * epsilon0) - 1e-12))
    for i in range(start, k + 1):
        log_binom = math.lgamma(k + 1) - math.lgamma(i + 1) - math.lgamma(k - i + 1)
        gap = epsilon + (k - i) * epsilon0 - i * epsilon0
        if gap >= 0:
            continue
        total += math.exp(log_binom + i * epsilon0 - log_norm) * -math.expm1(gap)
    return total


def kov_bound_epsilon(epsilon0: float, k: int, delta: float) -> float:
    """KOV 2015 Thm 3.4 closed form: min(kε₀, kε₀(e^ε₀−1)/(e^ε₀+1) + ε₀√(2k ln(1/δ)))."""
    drift = k * epsilon0 * math.expm1(epsilon0) / (math.exp(epsilon0) + 1)
    return push_up(min(k * epsilon0, drift + epsilon0 * math.sqrt(2 * k * math.log(1 / delta))))


def kov_epsilon(epsilon0: float, k: int, delta: float) -> float:
    """Smallest ε at which k ε₀-DP mechanisms compose to (ε, δ)-DP (never above kε₀)."""
    if kov_delta(epsilon0, k, 0.0) <= delta:
        return 0.0
    _, high = threshold(lambda e: kov_delta(epsilon0, k, e) <= delta, 0.0, k * epsilon0)
    return push_up(high)


# --- zCDP -----------------------------------------------------------------------------


def pure_to_zcdp(epsilon: float) -> float:
    """An ε-DP mechanism is ε²/2-zCDP (Bun & Steinke 2016)."""
    return epsilon * epsilon / 2


def cks_estimate_at(alpha: float, rho: float, log_inv_delta: float) -> float:
    """The CKS ε bound at one Rényi order α > 1 (valid for every α), in plain floats: a
    search's estimate; a stated bound is `zcdp_epsilon_at_order`'s."""
    a1 = alpha - 1
    return alpha * rho + (log_inv_delta + a1 * math.log(a1) - alpha * math.log(alpha)) / a1


def _best_alpha(rho: float, log_inv_delta: float) -> float:
    """The order α minimising the CKS bound.

    Its derivative in α is ρ + (ln α − ln(1/δ))/(α − 1)², zero where
    h(α) = ρ(α − 1)² + ln α − ln(1/δ) = 0. h rises on α > 1 from h(1) < 0 and is ≥ 0 at
    α = 1 + √(ln(1/δ)/ρ), so the root is found by Newton's method kept inside that bracket
    (bisecting when a step would leave it): about ten steps, where a grid and a golden-section
    search took hundreds of evaluations (the ε → ρ conversion asks ~60 times). Any α gives a
    valid bound; this one gives the tightest."""
    low, high = 1.0, 1.0 + min(math.sqrt(log_inv_delta / rho), 1e12)
    alpha = high
    for _ in range(200):
        value = rho * (alpha - 1) ** 2 + math.log(alpha) - log_inv_delta
        if value > 0:
            high = alpha
        else:
            low = alpha
        following = alpha - value / (2 * rho * (alpha - 1) + 1 / alpha)  # Newton
        if not low < following < high:
            following = (low + high) / 2
        converged = abs(following - alpha) <= 1e-15 * alpha
        if converged or following in (low, high):  # or no float left between the ends
            break
        alpha = following
    return max(following, math.nextafter(1.0, 2.0))


def zcdp_epsilon_at_order(rho: float, delta: float, alpha: float) -> float:
    """The CKS bound at a given order α, rounded up: valid whatever α is.

    The float formula (pushed up by a few ulps) can still be ~1e-9 too low after cancellation,
    so the value stated is the larger of it and the high-precision bound of
    `dprelease.accounting.precise` (with its allowance), rounded up. It may be
    ≤ 0 for a vanishing ρ; `zcdp_to_epsilon` refuses that."""
    float_bound = push_up(cks_estimate_at(alpha, rho, math.log(1 / delta)))
    return max(float_bound, round_up(cks_epsilon_upper(alpha, rho, delta)))


def _zcdp_epsilon(rho: float, delta: float) -> tuple[float, float]:
    alpha = _best_alpha(rho, math.log(1 / delta))
    return zcdp_epsilon_at_order(rho, delta, alpha), alpha


def zcdp_to_epsilon(rho: float, delta: float) -> tuple[float, float]:
    """(ε, α): the (ε, δ)-DP guarantee implied by ρ-zCDP, and the order that gives it.

    A positive ρ whose bound is ε ≤ 0 (a vanishing ρ, or a δ so large that the guarantee says
    nothing) is refused: no such pair is stated as a guarantee."""
    if rho <= 0 or not math.isfinite(rho):
        raise BudgetError(f"rho must be a finite number greater than 0, got {rho!r}.")
    if not 0 < delta < 1:
        raise BudgetError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    epsilon, alpha = _zcdp_epsilon(rho, delta)
    if epsilon <= 0:
        raise BudgetError(
            f"rho = {rho!r} at delta = {delta!r} converts to no positive epsilon (the bound is "
            f"{epsilon!r}); raise rho or lower delta."
        )
    return epsilon, alpha


@functools.lru_cache(maxsize=256)  # public numbers; an allocation asks twice per (ε, δ)
def epsilon_to_zcdp(epsilon: float, delta: float) -> tuple[float, float]:
    """(ρ, α): the largest ρ whose CKS bound at δ is at most ε, and the order certifying it.

    Bisection keeps the lower end, whose bound is checked at a fixed order, so the returned ρ
    never converts to more than ε.
    """
    if epsilon <= 0 or not math.isfinite(epsilon):
        raise BudgetError(f"epsilon must be a finite number greater than 0, got {epsilon!r}.")
    if not 0 < delta < 1:
        raise BudgetError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    log_inv_delta = math.log(1 / delta)

    def float_epsilon(rho: float) -> float:  # fast, for the search; checked precisely below
        return push_up(cks_estimate_at(_best_alpha(rho, log_inv_delta), rho, log_inv_delta))

    low, _ = threshold(lambda rho: float_epsilon(rho) > epsilon, 0.0, epsilon)
    low_alpha = _best_alpha(low, log_inv_delta) if low > 0 else math.inf
    for _ in range(64):  # the float bound may understate by ~1e-9: step ρ down until it fits
        if low <= 0 or zcdp_epsilon_at_order(low, delta, low_alpha) <= epsilon:
            break
        low *= 1 - 2.0**-30
    if low <= 0 or not 0 < zcdp_epsilon_at_order(low, delta, low_alpha) <= epsilon:
        raise BudgetError(
            f"epsilon = {epsilon!r} at delta = {delta!r} leaves no zCDP budget; "
            "raise epsilon or delta."
        )
    return low, low_alpha


def zcdp_guarantee(rhos: Sequence[float], delta: float, alpha: float | None = None) -> Guarantee:
    """Compose ρ_i exactly and convert once (cheaper than adding converted ε's).

    When `alpha` is given (the order that certified the total budget), the reported ε is the
    smaller of the optimised bound and the bound at that order, which is monotone in ρ.
    """
    rho = round_up(exact_sum(rhos))
    epsilon, _ = zcdp_to_epsilon(rho, delta)
    if alpha is not None and math.isfinite(alpha):
        epsilon = min(epsilon, zcdp_epsilon_at_order(rho, delta, alpha))
    return Guarantee(epsilon=epsilon, delta=delta, rho=rho, composition="zcdp")


def check_within(spent: Fraction, total: Fraction, unit: str) -> None:
    """The last line of defence: an allocation must never spend more than its total."""
    if spent > total:
        raise InternalError(f"allocation overspends: {unit} {float(spent)!r} > {float(total)!r}")


TIDY_TOLERANCE = 1e-9  # relative: the float rounding of exact sums, far below any real gap


def reported_total(
    total: Guarantee, epsilon: float | None, delta: float | None, rho: float | None
) -> Guarantee:
    """The composed total as every file and message reports it: an ε, δ or ρ that lies at
    most TIDY_TOLERANCE (relative) below the plan's target for it is reported as the target.

    Shares are nudged down by ulps until their exact sum fits the target, so a budget used in
    full composes to 0.9999999999999999 for ε = 1. The target is still an upper bound of the
    spend (the composed value is ≤ it), and is what the plan asked for: the report never says
    less was spent than was, nor more than the plan allows; the ledger charges the target."""
    return replace(
        total,
        epsilon=_tidy(total.epsilon, epsilon),
        delta=None if total.delta is None else _tidy(total.delta, delta),
        rho=None if total.rho is None else _tidy(total.rho, rho),
    )


def _tidy(value: float, target: float | None) -> float:
    """The plan's typed target when the value lies just below it (the allocation spent at
    most the target's decimal, `typed_budget`), else the value covered as a decimal."""
    if target is None or not target > 0:
        return decimal_cover(value)
    near = value <= target and target - value <= TIDY_TOLERANCE * target
    return target if near else decimal_cover(value)
