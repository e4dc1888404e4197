"""(ε, δ) of a set of discrete Gaussian measurements, certified by their privacy loss distribution.

Under `approx` every measured marginal gets integer noise N_Z(0, σ_i²) (the discrete Gaussian:
P(x) ∝ e^{−x²/2σ_i²}). The analytic-Gaussian formula the allocation is calibrated with is a
theorem about *continuous* noise; it is not a proof for integer noise (at σ = 5, ε = 1 the
discrete Gaussian's δ is 4 % above the continuous one's). The certificate is therefore the
privacy loss distribution (PLD) of the discrete mechanisms themselves:

- **Neighbours.** With `unit: row` (or `max_rows: 1`) one person moves, in each measured
  marginal, one cell by ±1 (`add_remove`, L1 = L2² = 1), or one cell by −1 and another by +1
  (`replace`, L1 = L2² = 2). The measurements are independent, so the release's PLD is the
  composition of one 1-D discrete Gaussian PLD of sensitivity 1 per moved cell (`shift_pattern`).
  A marginal whose cells do not move contributes a PLD that is identically 0, which only
  lowers δ, so the pattern above is the worst case. Adding and removing are symmetric
  (x ↦ 1 − x), and Google's `dp_accounting` keeps both directions anyway.
- **Bound.** `dp_accounting.pld` builds each PLD with its pessimistic discretisation (losses
  rounded up to a grid), composes them, and reads δ(ε) = E[(1 − e^{ε−L})₊] + P(L = ∞). Its
  discrete Gaussian is truncated at ⌈11.6σ⌉ and renormalised (mass left out t ≤ 1e-30 each);
  for the true pair, P(S) ≤ P'(S) + t and Q(S) ≥ (1 − t)Q'(S), t = Σ t_i, so
  δ(ε) ≤ δ'(ε − ln(1/(1 − t))) + t: we ask for δ' at ε − 1e-12 and add 1e-15, which also covers
  the rounding of the FFT convolution (its error per bin is ~1e-17 here), and multiply by
  1 + 1e-4. Below δ = 1e-12 the float convolution is not trusted: the certificate is then the
  zCDP bound ρ = Σ Δ₂²/(2σ_i²) (Canonne, Kamath & Steinke 2020: the multivariate discrete
  Gaussian is ρ-zCDP for any shift of L2 norm Δ₂) converted by the CKS bound, as it is for a
  unit of several rows, whose shift patterns within a marginal (any split of `max_rows`) the
  PLD above does not enumerate.
- **Calibration** keeps the allocation's shape: every σ_i is multiplied by the least common
  factor c ≥ 1 (to 2e-6) for which the certified δ at the plan's ε is at most its δ. From the
  analytic-Gaussian σ's, c is 1 or a fraction of a percent above.
- **Bound on the work** (issue 25). The zCDP factor is computed first (no PLD); the PLD is
  searched only below it, and only where the PLD at that factor fits `limits.PLD_MAX_POINTS`
  and `PLD_MAX_WIDTH` (`accounting.cost`) and certifies it. Elsewhere (σ's of thousands at
  ε ≈ 0.001, where the 1e-3 grid also costs the PLD more than zCDP) the zCDP certificate
  stands. Either bound is rigorous, so `holds` and `set_epsilon` accept either.

Certificates depend on public numbers only (σ's, sensitivity, ε, δ) and are cached.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from dprelease.accounting.composition import epsilon_to_zcdp, round_up, zcdp_to_epsilon
from dprelease.accounting.cost import PLD_GRID as _GRID
from dprelease.accounting.cost import pld_fits, pld_size
from dprelease.errors import BudgetError, InternalError
from dprelease.plan.table_spec import Sensitivity

PLD_MIN_DELTA = 1e-12  # below this the float convolution is not trusted: zCDP instead
_EPSILON_SLACK = 1e-12  # ε lowered by this for the noise truncated at 1e-30 per measurement
_ABSOLUTE_SLACK = 1e-15  # truncated mass and convolution rounding
_RELATIVE_SLACK = 1e-4
_TOLERANCE = 2e-6  # the factor is the least to within this (relative)
_NO_ROOM = (
    "The locked tables and targets leave the other tables no budget that can be certified; "
    "raise budget.epsilon or loosen them."
)

Method = Literal["pld", "zcdp"]


@dataclass(frozen=True)
class Certificate:
    """The discrete-Gaussian σ's that the release draws with, and what they guarantee.

    `epsilon` at `delta` is certified (never above the plan's ε); `factor` is what the
    allocation's σ's were multiplied by; `method` says which bound certified it."""

    sigmas: tuple[float, ...]
    factor: float
    epsilon: float
    delta: float
    method: Method


def shift_pattern(sens: Sensitivity) -> tuple[int, ...] | None:
    """How many cells of each marginal one person moves by 1, when that is the only pattern
    (one row per unit); None for units of several rows."""
    if sens.l1 == 1 and sens.l2_squared == 1:
        return (1,)
    if sens.l1 == 2 and sens.l2_squared == 2:
        return (1, 1)
    return None


@functools.cache
def _pld_module() -> Any:
    """`dp_accounting.pld`, imported on first use (about a second: it loads scipy.signal)."""
    from dp_accounting.pld import privacy_loss_distribution

    return privacy_loss_distribution


def discrete_gaussian_pld(sigma: float) -> Any:
    """dp_accounting's pessimistic connect-the-dots PLD of one discrete Gaussian of sensitivity
    1 (`from_discrete_gaussian_mechanism(σ, 1, pessimistic_estimate=True, _GRID,
    use_connect_dots=True)`), built the same way with the loop over its ±11.6σ integers in
    numpy: dp_accounting evaluates the privacy loss there one integer at a time in Python
    (11 s at σ = 9,000, at every step of the factor search). The losses (−½ − x)/σ² are the
    same floating-point operations, so the grid points, their δ's and the PMF are identical
    (tests/unit/plan/test_plan_resources.py compares them)."""
    from dp_accounting.pld import pld_pmf, privacy_loss_mechanism

    loss = privacy_loss_mechanism.DiscreteGaussianPrivacyLoss(sigma, sensitivity=1)
    bounds = loss.connect_dots_bounds()
    xs = np.arange(bounds.upper_x, bounds.lower_x - 1, -1, dtype=np.int64)
    # the loss is monotone in x, so dp_accounting's running list of floors and ceilings of
    # loss/grid (each kept when above the last) is the sorted set of all of them
    scaled = 1 * (-0.5 * 1 - xs) / (sigma**2) / _GRID
    rounded = np.unique(np.concatenate([np.floor(scaled), np.ceil(scaled)])).astype(int)
    # get_delta_for_epsilon(rounded × grid), its inverse loss per ε in numpy too: the largest
    # x whose loss is at least ε, ⌊clip(−½ − εσ², −T − 1, T − 1)⌋ (REMOVE, no subsampling)
    epsilons = rounded * _GRID
    cutoffs = np.floor(
        np.clip(-0.5 * 1 - epsilons * (sigma**2) / 1, bounds.lower_x - 1, bounds.upper_x)
    ).astype(np.int64)
    deltas = np.clip(
        loss.mu_upper_cdf(cutoffs) - np.exp(epsilons + loss.mu_lower_log_cdf(cutoffs)), 0, 1
    )
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(_GRID, rounded, deltas)
    return _pld_module().PrivacyLossDistribution(pmf)


@functools.lru_cache(maxsize=64)
def _composed(sigmas: tuple[float, ...], moved: int) -> Any:
    """The composed PLD of discrete Gaussians of sensitivity 1, `moved` cells per σ."""
    composed = None
    for sigma, count in sorted(Counter(sigmas).items()):
        one = discrete_gaussian_pld(sigma)
        times = count * moved
        part = one if times == 1 else one.self_compose(times)
        composed = part if composed is None else composed.compose(part)
    if composed is None:
        raise InternalError("a certificate needs at least one measurement")
    return composed


def pld_delta(sigmas: Sequence[float], sens: Sensitivity, epsilon: float) -> float:
    """Certified δ at ε of discrete Gaussians with these σ's (one marginal each), by the PLD."""
    pattern = shift_pattern(sens)
    if pattern is None:
        raise InternalError("the PLD certificate covers units of one row only")
    composed = _composed(tuple(sigmas), len(pattern))
    raw = float(composed.get_delta_for_epsilon(max(epsilon - _EPSILON_SLACK, 0.0)))
    return raw * (1 + _RELATIVE_SLACK) + _ABSOLUTE_SLACK


def pld_epsilon(sigmas: Sequence[float], sens: Sensitivity, delta: float) -> float:
    """The least ε (up to the PLD's grid, rounded up) whose certified δ is at most `delta`."""
    pattern = shift_pattern(sens)
    if pattern is None:
        raise InternalError("the PLD certificate covers units of one row only")
    composed = _composed(tuple(sigmas), len(pattern))
    want = (delta - _ABSOLUTE_SLACK) / (1 + _RELATIVE_SLACK)
    if want <= 0:
        raise InternalError("delta too small for the PLD certificate")
    epsilon = float(composed.get_epsilon_for_delta(want)) + _EPSILON_SLACK
    return round_up(Fraction(epsilon))


def _rho(sigmas: Sequence[float], sens: Sensitivity) -> Fraction:
    return sum((Fraction(sens.l2_squared) / (2 * Fraction(s) ** 2) for s in sigmas), Fraction(0))


def _scaled(sigmas: tuple[float, ...], factor: float, fixed: tuple[bool, ...]) -> tuple[float, ...]:
    """Every σ times the factor, except the fixed ones (locks and targets keep their noise)."""
    return tuple(s if keep else s * factor for s, keep in zip(sigmas, fixed, strict=True))


def _least_factor(
    excess: Callable[[float], float], holds_at: tuple[float, float] | None = None
) -> float:
    """The least c ≥ 1 (to `_TOLERANCE`) with excess(c) ≤ 0, excess decreasing in c (more
    noise, less δ): a bracket [fails, holds] narrowed by the Illinois false-position rule
    (excess is nearly linear here), so a handful of PLDs are composed, not twenty.
    `holds_at` is a known (c, excess(c) ≤ 0) that closes the bracket from above."""
    low, f_low = 1.0, excess(1.0)
    if f_low <= 0:
        return 1.0
    if holds_at is not None:
        high, f_high = holds_at
    else:
        high, f_high = 1.001, excess(1.001)
    while f_high > 0:
        low, f_low, high = high, f_high, 1 + 2 * (high - 1)
        if high > 1e6:
            raise BudgetError(_NO_ROOM)
        f_high = excess(high)
    side = 0
    while high - low > _TOLERANCE * low:
        guess = high - f_high * (high - low) / (f_high - f_low)
        guess = min(max(guess, low + (high - low) / 64), high - (high - low) / 64)
        f_guess = excess(guess)
        if f_guess <= 0:
            high, f_high = guess, f_guess
            f_low = f_low / 2 if side == -1 else f_low
            side = -1
        else:
            low, f_low = guess, f_guess
            f_high = f_high / 2 if side == 1 else f_high
            side = 1
    return high


def _zcdp_certificate(
    sigmas: tuple[float, ...],
    sens: Sensitivity,
    epsilon: float,
    delta: float,
    fixed: tuple[bool, ...],
) -> Certificate:
    rho_max = Fraction(epsilon_to_zcdp(epsilon, delta)[0])
    factor = _least_factor(lambda c: float(_rho(_scaled(sigmas, c, fixed), sens) - rho_max))
    scaled = _scaled(sigmas, factor, fixed)
    try:
        stated = min(zcdp_to_epsilon(round_up(_rho(scaled, sens)), delta)[0], epsilon)
    except BudgetError:  # a vanishing ρ at a large δ converts to no positive ε: ρ ≤ ρ(ε) holds
        stated = epsilon
    return Certificate(scaled, factor, stated, delta, "zcdp")


def _uses_zcdp(sigmas: Sequence[float], sens: Sensitivity, delta: float) -> bool:
    """Whether only the zCDP bound applies: units of several rows, a δ below what the float
    convolution is trusted for, or a PLD too large to lay out within the bound (issue 25)."""
    pattern = shift_pattern(sens)
    if pattern is None or delta < PLD_MIN_DELTA:
        return True
    return not pld_fits(pld_size(sigmas, len(pattern)))


@functools.lru_cache(maxsize=256)
def _certify(
    sigmas: tuple[float, ...],
    sens: Sensitivity,
    epsilon: float,
    delta: float,
    fixed: tuple[bool, ...],
) -> Certificate:
    if all(fixed):  # nothing to scale: the fixed noise holds or the budget is too small
        if not holds(sigmas, sens, epsilon, delta):
            raise BudgetError(
                f"The locked tables and targets need more than epsilon = {epsilon:g} at delta "
                f"{delta:g}; raise budget.epsilon or loosen them."
            )
        zcdp_holds = _rho(sigmas, sens) <= Fraction(epsilon_to_zcdp(epsilon, delta)[0])
        return Certificate(
            sigmas,
            1.0,
            min(set_epsilon(sigmas, sens, delta), epsilon),
            delta,
            "zcdp" if zcdp_holds else "pld",
        )
    if _uses_zcdp(sigmas, sens, delta):
        return _zcdp_certificate(sigmas, sens, epsilon, delta, fixed)

    def excess(c: float) -> float:  # log(certified δ ÷ δ); never a PLD beyond the bound
        scaled = _scaled(sigmas, c, fixed)
        if _uses_zcdp(scaled, sens, delta):
            raise BudgetError(_NO_ROOM)
        return math.log(pld_delta(scaled, sens, epsilon) / delta)

    # The zCDP bound is rigorous too and costs no PLD: the PLD is searched only below its
    # factor, where it needs less noise; where it does not fit there or needs more (a grid of
    # 1e-3 against a budget of ε ≈ 0.003), the zCDP certificate stands. So every PLD this
    # search builds is within the bound, and approx never adds more noise than zCDP needs.
    try:
        zcdp = _zcdp_certificate(sigmas, sens, epsilon, delta, fixed)
    except BudgetError:
        zcdp = None  # the fixed σ's alone exceed ρ(ε, δ); the PLD may still certify them
    if zcdp is not None:
        if _uses_zcdp(zcdp.sigmas, sens, delta):
            return zcdp
        at_zcdp = excess(zcdp.factor)
        if at_zcdp > 0:
            return zcdp
        factor = _least_factor(excess, (zcdp.factor, at_zcdp))
    else:
        factor = _least_factor(excess)
    scaled = _scaled(sigmas, factor, fixed)
    if pld_delta(scaled, sens, epsilon) > delta:  # the σ's drawn with, checked once more
        raise InternalError("the discrete Gaussian certificate does not hold")
    stated = min(pld_epsilon(scaled, sens, delta), epsilon)
    return Certificate(scaled, factor, stated, delta, "pld")


def certify(
    sigmas: Sequence[float],
    sens: Sensitivity,
    epsilon: float,
    delta: float,
    fixed: Sequence[bool] | None = None,
) -> Certificate:
    """The σ's (the allocation's times the least common factor ≥ 1) whose discrete Gaussians
    together are certified (ε, δ)-DP, and the ε they are certified for at δ.

    `fixed` marks σ's that keep their value (a lock's, or the largest that meets a target):
    only the others are scaled, so a target's margin of error is still met."""
    if not sigmas:
        raise InternalError("a certificate needs at least one measurement")
    keep = tuple(fixed) if fixed is not None else (False,) * len(sigmas)
    return _certify(tuple(sigmas), sens, epsilon, delta, keep)


def holds(sigmas: Sequence[float], sens: Sensitivity, epsilon: float, delta: float) -> bool:
    """Whether discrete Gaussians with exactly these σ's are certified (ε, δ)-DP (the check a
    release runs before drawing): by the zCDP bound, or by the PLD where it applies (both are
    rigorous; `certify` keeps whichever needs less noise)."""
    if _rho(sigmas, sens) <= Fraction(epsilon_to_zcdp(epsilon, delta)[0]):
        return True
    return not _uses_zcdp(sigmas, sens, delta) and pld_delta(sigmas, sens, epsilon) <= delta


def set_epsilon(sigmas: Sequence[float], sens: Sensitivity, delta: float) -> float:
    """What discrete Gaussians with these σ's together are certified for at δ (the least ε
    of the zCDP bound and, where it applies, the PLD)."""
    if _uses_zcdp(sigmas, sens, delta):
        return zcdp_to_epsilon(round_up(_rho(sigmas, sens)), delta)[0]
    pld = pld_epsilon(sigmas, sens, delta)
    try:
        return min(zcdp_to_epsilon(round_up(_rho(sigmas, sens)), delta)[0], pld)
    except BudgetError:  # a vanishing ρ at a large δ converts to no positive ε
        return pld


def alone_epsilon(sigma: float, sens: Sensitivity, delta: float) -> float:
    """What one discrete Gaussian measurement alone is certified for at δ."""
    return set_epsilon([sigma], sens, delta)
