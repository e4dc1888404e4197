"""The one text of a privacy budget (ε, δ, ρ) for people: a few significant digits, as people
write numbers (1, 0.5, 0.1143, 1e-10).

Only the text is rounded, for display; stored, charged and compared values never are, and
JSON carries the values themselves. A value's text starts from its shortest round-trip decimal
(Python's repr: read back, it is the very float that was charged, so 0.1 is "0.1" and not
0.1000000000000000055), which is then rounded to DIGITS significant digits: to nearest by
default; where a message sets two amounts against each other, the need *up* and what is left
(or a cap) *down*, so that a refusal never reads "needs ε = 0.1 but 0.1 is left": whenever
need > left, up(need) > down(left).

Totals that are exact print as such: `accounting.allocation` reports a composed total that lies
a float rounding below the plan's target as the target itself (still an upper bound of the
spend), so the total of ε = 1 is 1 in every file, not 0.9999999999999999.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from typing import Literal

Bound = Literal["nearest", "up", "down"]
DIGITS = 4  # significant digits people read in a budget
FIXED_RANGE = (
    Decimal("1e-4"),
    Decimal("1e6"),
)  # written out in full inside, as 1e-10 or 2.5e+7 outside
_ROUNDING = {"nearest": ROUND_HALF_EVEN, "up": ROUND_CEILING, "down": ROUND_FLOOR}


def budget_text(value: float, bound: Bound = "nearest", digits: int = DIGITS) -> str:
    """`value` with at most `digits` significant digits: 0.9999999999999999 → "1";
    0.5000000000000001 → "0.5"; 1e-10 → "1e-10"; 0.11426567855433445 → "0.1143"; rounded
    up (`bound="up"`) or down (`"down"`) from the shortest decimal of the float."""
    if not math.isfinite(value):
        return "∞" if value > 0 else ("−∞" if value < 0 else "nan")
    if value == 0:
        return "0"
    shortest = Decimal(repr(float(value)))
    rounded = Context(prec=digits, rounding=_ROUNDING[bound]).plus(shortest).normalize()
    low, high = FIXED_RANGE
    if low <= abs(rounded) < high:
        return format(rounded, "f")
    return format(rounded, "e")


def optional_budget_text(value: float | None, bound: Bound = "nearest", none: str = "—") -> str:
    """`budget_text`, or `none` where a value does not apply (δ of pure DP, ρ outside zCDP)."""
    return none if value is None else budget_text(value, bound)


def cost_text(epsilon: float | None, delta: float | None) -> str:
    """What a release costs, as people write it: "ε = 1" or "ε = 1, δ = 1e-10"."""
    text = f"ε = {optional_budget_text(epsilon)}"
    return text + (f", δ = {budget_text(delta)}" if delta else "")


def readable(value: float | None, digits: int = 15) -> float | None:
    """A computed figure for a file a person reads (metadata.json, `plan --json`): rounded to
    `digits` significant digits, so 6.000000000000001 is 6.0 and 1/6 is 0.166666666666667
    (issue 37.4). Only for figures that describe a release (a share, a noise scale); the
    charged total is rounded toward the safe side (`accounting.composition.decimal_up`)."""
    if value is None or not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.{digits}g}")
