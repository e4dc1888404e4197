"""Private domain discovery: the stability-based histogram (`domain: {discover: {min_count}}`).

Every value that occurs in the data gets its count plus discrete Laplace noise of scale b
(OpenDP's secure sampler); the values whose noisy count reaches the threshold τ are released,
sorted, as the column's domain (`domain_source: discovered`). The noisy counts themselves are
not released. Values that do not occur are never candidates, which is why this is (ε, δ)-DP
and not ε-DP (Korolova et al. 2009; Bun, Nissim & Stemmer 2016; Wilson et al. 2020 for many
rows per unit; Rogers 2023, the analysis OpenDP's `make_laplace_threshold` cites).

Privacy, with m = max_rows, L1 = m (add/remove) or 2m (replace), t = e^{−1/b}:

- values present in both neighbours: their counts move by at most L1 in total: ε = L1/b;
- values present in one neighbour only (the added or removed unit's own, k_1 + … + k_j ≤ m
  rows over j new values): released with probability
  Σ_i P(k_i + X ≥ τ) = Σ_i t^{τ−k_i}/(1+t)   (X discrete Laplace, τ > m).
  t^{τ−k}/k is log-convex in k, so over all splits of at most m rows the sum is at most
      δ(τ) = max(m·t^{τ−1}, t^{τ−m}) / (1 + t),
  which with m = 1 is t^{τ−1}/(1+t), the discrete form of the familiar
  τ = 1 + ln(1/(2δ))/ε of the continuous Laplace.

So the release is (L1/b, δ(τ))-DP. τ is the larger of `min_count` and the smallest τ with
δ(τ) ≤ the δ share. Under zcdp it is δ(τ)-approximately ε²/2-zCDP: its ρ adds to the other
ρ's and its δ is added to the δ of the final conversion.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dprelease.accounting.mechanisms.discrete_laplace import DISCRETE_LAPLACE, laplace_scale
from dprelease.accounting.mechanisms.registry import Noise
from dprelease.errors import BudgetError
from dprelease.plan.stat_spec import DiscoverSpec
from dprelease.plan.table_spec import Sensitivity
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.noise import StatNoise

DOMAIN_SOURCE = "discovered"
_SAFETY = 1 + 1e-9  # float δ formulas are checked with this much room


def release_probability(count: int, threshold: int, scale: float) -> float:
    """P(count + X ≥ τ) for X discrete Laplace with scale b (P(x) ∝ t^{|x|}, t = e^{−1/b})."""
    t = math.exp(-1 / scale)
    k = threshold - count
    if k >= 1:
        return math.exp(-k / scale) / (1 + t)
    return 1 - math.exp(-(1 - k) / scale) / (1 + t)


def discovery_delta(threshold: int, scale: float, max_rows: int) -> float:
    """δ(τ) = max(m·t^{τ−1}, t^{τ−m}) / (1 + t): a value only one neighbour has is released."""
    if threshold <= max_rows:
        return 1.0
    t = math.exp(-1 / scale)
    log_one = math.log(max_rows) - (threshold - 1) / scale
    log_all = -(threshold - max_rows) / scale
    return math.exp(max(log_one, log_all)) / (1 + t) * _SAFETY


def discovery_threshold(scale: float, delta: float, max_rows: int) -> int:
    """The smallest whole τ > m with δ(τ) ≤ δ."""
    if not 0 < delta < 1:
        raise BudgetError(f"Domain discovery needs 0 < delta < 1, got {delta!r}.")
    t = math.exp(-1 / scale)
    # From m·t^{τ−1}/(1+t) ≤ δ and t^{τ−m}/(1+t) ≤ δ; then checked and nudged.
    guess = max(
        1 + scale * math.log(max_rows / (delta * (1 + t))),
        max_rows + scale * math.log(1 / (delta * (1 + t))),
    )
    tau = max(max_rows + 1, math.ceil(guess) - 1)
    while discovery_delta(tau, scale, max_rows) > delta:
        tau += 1
    return tau


@dataclass(frozen=True)
class DiscoveryMechanism:
    """Noise, threshold and cost of one column's discovery. All public."""

    spec: DiscoverSpec
    context: StatContext
    sensitivity: Sensitivity
    noise: Noise
    threshold: int
    cost: Share  # epsilon (or rho) and the delta(τ) actually spent

    @property
    def epsilon(self) -> Fraction:
        return Fraction(self.sensitivity.l1) / Fraction(self.noise.scale)


def calibrate_discovery(spec: DiscoverSpec, share: Share, ctx: StatContext) -> DiscoveryMechanism:
    """Scale from ε (or from ρ = ε²/2 under zcdp), threshold from δ and min_count."""
    if not share.accountant.needs_delta or not share.delta:
        raise BudgetError(
            "Domain discovery is (epsilon, delta)-DP: use approx, advanced or zcdp accounting "
            "with delta > 0, or give the column a public domain."
        )
    l1 = ctx.symmetric_distance
    sens = Sensitivity(l1=l1, l2_squared=l1 * l1)
    scale = laplace_scale(share.pure_epsilon(), l1)
    while not share.fits_pure([Fraction(l1) / Fraction(scale)]):  # exactly, in any unit
        scale = math.nextafter(scale, math.inf)
    tau = max(spec.min_count, discovery_threshold(scale, share.delta, ctx.max_rows))
    spent_delta = discovery_delta(tau, scale, ctx.max_rows)
    cost = share.pure_cost([Fraction(l1) / Fraction(scale)], delta=spent_delta)
    return DiscoveryMechanism(spec, ctx, sens, Noise(DISCRETE_LAPLACE.name, scale), tau, cost)


def _present(values: Iterable[object]) -> Counter[object]:
    """CONFIDENTIAL: count of each value that occurs (missing values left out)."""
    counter: Counter[object] = Counter()
    for value in values:
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            continue
        counter[value] += 1
    return counter


def sort_domain(values: Iterable[object]) -> tuple[object, ...]:
    """Numbers by value, otherwise as text (codes keep their exact spelling)."""
    items = list(values)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in items):
        return tuple(sorted(items, key=lambda v: float(v)))  # type: ignore[arg-type]
    return tuple(sorted(items, key=str))


@dataclass(frozen=True)
class DiscoveredDomain:
    """The released domain (public): sorted values, and how it was found."""

    values: tuple[object, ...]
    threshold: int
    min_count: int
    domain_source: str = DOMAIN_SOURCE


def discover_domain(
    values: Sequence[object], mechanism: DiscoveryMechanism, noise: StatNoise
) -> DiscoveredDomain:
    """The column's released domain: noise on every present count (secure: OpenDP's discrete
    Laplace; a preview's numpy noise), the keys at or above the threshold, sorted."""
    present = _present(values)
    keys = list(present)
    counts = np.array([present[k] for k in keys], dtype=np.int64)
    noisy = noise.counts(counts, mechanism.noise, mechanism.sensitivity) if keys else counts
    kept = [key for key, count in zip(keys, noisy, strict=True) if count >= mechanism.threshold]
    return DiscoveredDomain(sort_domain(kept), mechanism.threshold, mechanism.spec.min_count)


class DiscoveryKind:
    """Domain discovery as one object: calibrate a share, draw a domain."""

    def calibrate(self, spec: DiscoverSpec, share: Share, ctx: StatContext) -> DiscoveryMechanism:
        return calibrate_discovery(spec, share, ctx)

    def draw(
        self, values: Sequence[object], mechanism: DiscoveryMechanism, noise: StatNoise
    ) -> DiscoveredDomain:
        return discover_domain(values, mechanism, noise)


DISCOVERY = DiscoveryKind()
