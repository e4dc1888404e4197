"""The local-DP planner: every frequency protocol's variance and margin of error at (ε, d, n),
the best one, and the central alternative at the same pure ε.

Local: the variance of an estimated count whose true value is near 0 (Wang et al.),
n·q*(1−q*)/(p−q*)², and its margin of error z_{1−α/2}·√Var: the estimate is a sum of n
independent reports, so it is close to normal for any n worth planning.
Central: a discrete Laplace histogram, sensitivity 1 under add/remove, b = 1/ε, with its
exact variance and tail margin of error from `dprelease.accounting.mechanisms`.

ratio_n: how many times n the best local protocol needs to match central DP's margin of
error on a *share* (count/n) at n respondents. The local share MoE is z·√(v/n') with v the
per-respondent variance; the central one is moe_central/n; they are equal at
n' = z²·v·n²/moe_central², so ratio_n = n'/n = (moe_local(n)/moe_central)².
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from dprelease.accounting.mechanisms import DISCRETE_LAPLACE, Noise, laplace_scale
from dprelease.errors import quote
from dprelease.ldp.base import LdpError, check_domain_size, check_epsilon, check_respondents
from dprelease.ldp.registry import PROTOCOLS

TIE = 1e-12  # relative: variances this close are equal, and the earlier protocol wins


def normal_quantile(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise LdpError(
            f"The confidence must lie strictly between 0 and 1, got {quote(confidence)}."
        )
    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class ProtocolAccuracy:
    """One protocol at (ε, d, n): Var and MoE of a count near 0; g for local hashing."""

    name: str
    title: str
    variance: float
    moe: float
    g: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "variance": self.variance, "moe": self.moe}
        if self.g is not None:  # a hashing protocol's range
            out["g"] = self.g
        return out


@dataclass(frozen=True)
class CentralAccuracy:
    mechanism: str
    noise_scale: float
    variance: float
    moe: float

    def to_dict(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, "variance": self.variance, "moe": self.moe}


def central_histogram(epsilon: float, confidence: float) -> CentralAccuracy:
    """The discrete Laplace histogram at pure ε, sensitivity 1 (add/remove), via mechanisms."""
    noise = Noise(DISCRETE_LAPLACE.name, laplace_scale(epsilon, 1))
    return CentralAccuracy(noise.mechanism, noise.scale, noise.variance, noise.moe(1 - confidence))


def protocol_accuracies(
    epsilon: float, d: int, n: int, confidence: float
) -> tuple[ProtocolAccuracy, ...]:
    z = normal_quantile(confidence)
    out = []
    for protocol in PROTOCOLS.values():
        support = protocol.probabilities(epsilon, d)
        variance = support.variance(n)
        out.append(
            ProtocolAccuracy(
                protocol.name,
                protocol.title,
                variance,
                z * math.sqrt(variance),
                support.g if protocol.chooses_g else None,
            )
        )
    return tuple(out)


def best_of(accuracies: Sequence[ProtocolAccuracy]) -> ProtocolAccuracy:
    """The smallest variance; within TIE, the earliest in the registry."""
    best = accuracies[0]
    for candidate in accuracies[1:]:
        if candidate.variance < best.variance * (1 - TIE):
            best = candidate
    return best


@dataclass(frozen=True)
class LdpPlan:
    epsilon: float
    domain_size: int
    n: int
    confidence: float
    protocols: tuple[ProtocolAccuracy, ...]
    best: str
    central: CentralAccuracy
    ratio_n: float

    @property
    def best_protocol(self) -> ProtocolAccuracy:
        return next(p for p in self.protocols if p.name == self.best)

    def to_dict(self) -> dict[str, Any]:
        """The contract's JSON shape (`ldp plan --json`), plus the inputs."""
        return {
            "epsilon": self.epsilon,
            "domain_size": self.domain_size,
            "n": self.n,
            "confidence": self.confidence,
            "protocols": [p.to_dict() for p in self.protocols],
            "best": self.best,
            "central": self.central.to_dict(),
            "ratio_n": self.ratio_n,
        }

    def answer(self) -> str:
        """The planning answer in the user's words."""
        best = self.best_protocol
        ratio = self.ratio_n
        shown = f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.3g}"
        how_many = (
            f"you need {shown}× more respondents"
            if ratio >= 1
            else f"you need only {shown}× as many respondents"
        )
        return (
            f"With {best.name} at ε = {self.epsilon:g} {how_many} for the same margin of error "
            f"as central DP (a discrete Laplace histogram): with n = {self.n:,} respondents "
            f"a count is within ±{best.moe:,.4g} ({100 * best.moe / self.n:.3g}% of n) under "
            f"{best.name}, against ±{self.central.moe:,.4g} centrally, at "
            f"{self.confidence:.0%} confidence. The respondents' factor is the margins' ratio "
            "squared: a local margin, as a share of n, shrinks only with √n, while the central "
            "one shrinks with n."
        )


def plan_ldp(epsilon: float, domain_size: int, n: int, confidence: float = 0.95) -> LdpPlan:
    """Every protocol's accuracy at (ε, d, n), the best, the central alternative, ratio_n."""
    epsilon = check_epsilon(epsilon)
    d = check_domain_size(domain_size)
    n = check_respondents(n)
    accuracies = protocol_accuracies(epsilon, d, n, confidence)
    best = best_of(accuracies)
    central = central_histogram(epsilon, confidence)
    return LdpPlan(
        epsilon, d, n, confidence, accuracies, best.name, central, (best.moe / central.moe) ** 2
    )


def variance_against_epsilon(epsilons: Sequence[float], d: int, n: int) -> dict[str, list[float]]:
    """Var of a count near 0 for each protocol at each ε, and the central histogram's."""
    curves: dict[str, list[float]] = {name: [] for name in PROTOCOLS}
    curves["central"] = []
    for epsilon in epsilons:
        for name, protocol in PROTOCOLS.items():
            curves[name].append(protocol.probabilities(epsilon, d).variance(n))
        curves["central"].append(central_histogram(epsilon, 0.95).variance)
    return curves


def respondents_needed(
    epsilon: float, d: int, moe_shares: Sequence[float], confidence: float = 0.95
) -> dict[str, list[float]]:
    """n for a margin of error of `share`·n on a count: z²·v/share² locally (v per
    respondent), moe_central/share centrally (its MoE on a count does not grow with n)."""
    epsilon, d = check_epsilon(epsilon), check_domain_size(d)
    if not all(0 < s < 1 for s in moe_shares):
        raise LdpError("A target margin of error must be a share strictly between 0 and 1.")
    z = normal_quantile(confidence)
    needed: dict[str, list[float]] = {}
    for name, protocol in PROTOCOLS.items():
        per_respondent = protocol.probabilities(epsilon, d).variance(1)
        needed[name] = [z**2 * per_respondent / share**2 for share in moe_shares]
    central = central_histogram(epsilon, confidence).moe
    needed["central"] = [central / share for share in moe_shares]
    return needed
