"""High-precision re-checks of the two float formulas a budget depends on.

`decimal` at 60 significant digits: its `ln`, `exp` and `sqrt` are correctly rounded, so each
step errs by less than one unit in the 60th digit. The results below add an allowance far above
that accumulated error (see each function) and are then rounded *up* to a float, so they are
upper bounds (exact `Fraction`s): a float formula's result is accepted only when it is at
least this bound.

- `cks_epsilon_upper`: the Canonne–Kamath–Steinke bound at one order α,
  ε = αρ + (ln(1/δ) + (α−1) ln(α−1) − α ln α) / (α − 1).
- `gaussian_delta_upper`: the analytic Gaussian's δ(ε) (Balle & Wang 2018, Theorem 8),
  δ = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), with Φ from a series or a continued fraction.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from fractions import Fraction

_DIGITS = 60
_RELATIVE_SLACK = Decimal("1e-50")  # ≫ the error of a few dozen correctly rounded steps
_ABSOLUTE_SLACK = Decimal("1e-45")  # for δ, whose terms are at most 1 in size


def _context() -> decimal.Context:
    return decimal.Context(prec=_DIGITS, rounding=decimal.ROUND_HALF_EVEN, Emin=-999999)


def cks_epsilon_upper(alpha: float, rho: float, delta: float) -> Fraction:
    """An upper bound on the CKS ε at order α > 1, exact up to the allowance."""
    with decimal.localcontext(_context()):
        a, r, d = Decimal(alpha), Decimal(rho), Decimal(delta)
        a1 = a - 1
        terms = (-d.ln(), a1 * a1.ln(), -(a * a.ln()))
        value = a * r + sum(terms, Decimal(0)) / a1
        size = a * r + sum((abs(t) for t in terms), Decimal(0)) / a1
        return Fraction(value + size * _RELATIVE_SLACK)


def _pi() -> Decimal:
    """π = 16 atan(1/5) − 4 atan(1/239) (Machin), by the atan series."""

    def atan_inverse(n: int) -> Decimal:
        total, power, k = Decimal(0), Decimal(1) / n, 0
        while power:
            term = power / (2 * k + 1)
            total += -term if k % 2 else term
            power /= n * n
            k += 1
            if term < Decimal(10) ** (-_DIGITS - 5):
                break
        return total

    return 16 * atan_inverse(5) - 4 * atan_inverse(239)


def _erfc(z: Decimal) -> Decimal:
    """erfc(z) for z ≥ 0: Taylor series of erf below 3, Lentz's continued fraction above."""
    pi = _pi()
    if z < 3:
        # erf(z) = 2/√π Σ (−1)^n z^{2n+1} / (n! (2n+1)); terms grow to about e^{z²} < 10^4.
        with decimal.localcontext() as ctx:
            ctx.prec = _DIGITS + 10
            total, power, n = Decimal(0), z, 0
            while True:
                term = power / (2 * n + 1)
                total += -term if n % 2 else term
                n += 1
                power = power * z * z / n
                if abs(term) < Decimal(10) ** (-_DIGITS - 8):
                    break
            return 1 - 2 * total / pi.sqrt()
    # erfc(z) = e^{−z²}/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …))))).
    tiny = Decimal(10) ** (-_DIGITS * 2)
    f, c, d, k = z, z, Decimal(0), 1
    while True:
        a = Decimal(k) / 2
        d = z + a * d
        d = 1 / (d if d != 0 else tiny)
        c = z + a / c
        step = c * d
        f *= step
        k += 1
        if abs(step - 1) < Decimal(10) ** (-_DIGITS - 2):
            break
    return (-(z * z)).exp() / pi.sqrt() / f


def _normal_cdf(x: Decimal) -> Decimal:
    z = abs(x) / Decimal(2).sqrt()
    tail = _erfc(z) / 2
    return tail if x < 0 else 1 - tail


def gaussian_delta_upper(sigma: float, epsilon: float, l2: float) -> Fraction:
    """An upper bound on the analytic Gaussian's δ(ε) at noise σ and sensitivity Δ₂."""
    with decimal.localcontext(_context()):
        s, e, sens = Decimal(sigma), Decimal(epsilon), Decimal(l2)
        a = sens / (2 * s) - e * s / sens
        b = -sens / (2 * s) - e * s / sens
        value = _normal_cdf(a) - e.exp() * _normal_cdf(b)
        return Fraction(max(value, Decimal(0)) + _ABSOLUTE_SLACK)
