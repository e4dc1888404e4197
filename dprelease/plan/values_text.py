"""Plan values as text: a number as the plan wrote it, whether a value is a number, codes
named in a message. No dependencies beyond the errors, so every plan module may use them."""

from __future__ import annotations

from collections.abc import Sequence

from dprelease.errors import PlanError, quote


def format_number(value: int | float) -> str:
    """The text of a plan number as written in the plan: 18 stays "18", 2.5 stays "2.5"."""
    if isinstance(value, bool):
        raise PlanError(f"Expected a number, got {quote(value)}.")
    # int stays "18"; a float keeps the decimal point the plan wrote ("18.0", "2.5").
    return str(value) if isinstance(value, int) else repr(value)


def public_number(value: float) -> str:
    """A public number as written in a plan: 200000, not 2e+05."""
    return str(int(value)) if float(value).is_integer() else f"{value:.10g}"


def is_number(value: object) -> bool:
    """True for int and float plan values, False for bool and everything else."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def name_codes(codes: Sequence[str], shown: int = 20) -> str:
    """Codes for a message: the first `shown` quoted, then how many more."""
    text = ", ".join(quote(c) for c in codes[:shown])
    return text + (f" and {len(codes) - shown} more" if len(codes) > shown else "")
