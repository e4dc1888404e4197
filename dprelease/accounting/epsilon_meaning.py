"""What ε (and δ) mean as risk, for people: pure functions, no data.

For an (ε, δ)-DP release and any person, any attacker and any prior:
- posterior odds: the release moves the attacker's odds that the person is in the data (or
  has some value) by at most a factor e^ε, up to probability δ:
  posterior odds ≤ e^ε · prior odds (failing with probability at most δ);
- membership inference as a hypothesis test: every test of "in the data" against "not in the
  data" has TPR ≤ e^ε · FPR + δ, and by symmetry TPR ≤ 1 − e^−ε·(1 − δ − FPR); so its
  advantage TPR − FPR is at most (e^ε − 1 + 2δ)/(e^ε + 1) (Kairouz, Oh, Viswanath 2015).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dprelease.errors import BudgetError, quote


def _check(epsilon: float, delta: float) -> None:
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon >= 0):
        raise BudgetError(f"ε must be a finite number ≥ 0, got {quote(epsilon)}.")
    if not (isinstance(delta, int | float) and 0 <= delta < 1):
        raise BudgetError(f"δ must lie in [0, 1), got {quote(delta)}.")


def odds_factor(epsilon: float) -> float:
    """e^ε: the most the release can multiply an attacker's odds by (inf beyond float range)."""
    _check(epsilon, 0.0)
    return math.exp(epsilon) if epsilon < 700 else math.inf


def posterior_bound(prior: float, epsilon: float, delta: float = 0.0) -> float:
    """The largest posterior probability an attacker can reach from `prior`:
    p' ≤ e^ε·p / (e^ε·p + 1 − p), plus δ (capped at 1)."""
    _check(epsilon, delta)
    if not 0 <= prior <= 1:
        raise BudgetError(f"A prior probability lies in [0, 1], got {quote(prior)}.")
    factor = odds_factor(epsilon)
    if math.isinf(factor):
        return 1.0 if prior > 0 else min(1.0, delta)
    bound = factor * prior / (factor * prior + 1 - prior) if prior < 1 else 1.0
    return min(1.0, bound + delta)


def tpr_bound(fpr: float, epsilon: float, delta: float = 0.0) -> float:
    """The largest true-positive rate of a membership test at false-positive rate `fpr`:
    min(1, e^ε·FPR + δ, 1 − e^−ε·(1 − δ − FPR))."""
    _check(epsilon, delta)
    if not 0 <= fpr <= 1:
        raise BudgetError(f"A false-positive rate lies in [0, 1], got {quote(fpr)}.")
    factor = odds_factor(epsilon)
    if math.isinf(factor):
        return 1.0 if fpr > 0 or delta > 0 else 0.0
    return max(0.0, min(1.0, factor * fpr + delta, 1 - (1 - delta - fpr) / factor))


def max_advantage(epsilon: float, delta: float = 0.0) -> float:
    """The largest TPR − FPR any membership test can reach: (e^ε − 1 + 2δ)/(e^ε + 1)."""
    _check(epsilon, delta)
    factor = odds_factor(epsilon)
    if math.isinf(factor):
        return 1.0
    return min(1.0, (factor - 1 + 2 * delta) / (factor + 1))


@dataclass(frozen=True)
class EpsilonMeaning:
    epsilon: float
    delta: float
    odds_factor: float
    max_advantage: float
    prior_half_to: float  # an attacker 50 % sure ends at most this sure
    sentence: str


def explain_epsilon(epsilon: float, delta: float = 0.0) -> EpsilonMeaning:
    """The numbers and one sentence a non-expert reads correctly."""
    factor = odds_factor(epsilon)
    advantage = max_advantage(epsilon, delta)
    half = posterior_bound(0.5, epsilon, delta)
    times = "more than a million" if factor > 1e6 else f"at most {factor:.3g}"
    sentence = (
        "Whatever an attacker knew beforehand, this release can multiply their odds that you "
        f"are in the data (or on any fact about you) by a factor of {times}: someone who was "
        f"50 % sure ends at most {half:.1%} sure"
        + (f", except with a chance of at most {delta:.1g}" if delta else "")
        + "."
    )
    return EpsilonMeaning(epsilon, delta, factor, advantage, half, sentence)


def epsilon_risk_html(epsilon: float | None, delta: float | None) -> str:
    """A short HTML block for report.html: the odds bound, the membership-test bound and the
    sentence (public: it depends on ε and δ only)."""
    from html import escape

    if epsilon is None:
        return ""
    meaning = explain_epsilon(epsilon, delta or 0.0)
    plus = f" + {delta:.1g}" if delta else ""
    return (
        "<p><strong>ε as risk.</strong> "
        f"An attacker's odds on any fact about a person change by a factor of at most "
        f"e<sup>ε</sup> = {meaning.odds_factor:.4g}{escape(plus and ' (plus δ)')}. "
        f"Any test of whether a person is in the data has true-positive rate ≤ "
        f"{meaning.odds_factor:.4g} × false-positive rate{escape(plus)}, so its advantage "
        f"(TPR − FPR) is at most {meaning.max_advantage:.3f}. "
        f"{escape(meaning.sentence)}</p>"
    )
