"""Privacy audit of a mechanism with a discrete output (a quantile's candidate, a discovered
domain, the sparse vector's answers) on two neighbouring data sets.

The method of `helpers.audit`, for outputs that are not noise added to counts: draw N
outputs on x and N on x′ with the sampler under test; the rejection sets are
S_t = {y : L(y) ≥ t} and their mirrors {L ≤ −t}, where L(y) = ln p(y)/p′(y) is the privacy
loss of the *declared* output distributions p, p′ (computed exactly, not from the samples),
for a priori thresholds t. Clopper–Pearson bounds on each set's mass (Bonferroni over the
sets, α = 1e-6) give ε_lb(δ) = ln((p0_lo − δ)/p1_hi); a claim (ε_j, δ_j) below it is violated.

Outputs the declared distributions give probability 0 (a value that only x′ has, discovered)
get L = ±∞ and fall in every set on their side: the δ of a claim is what pays for them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from dprelease.errors import InternalError
from helpers.audit import ALPHA, AuditResult, Claim, audit_losses

LOSS_CUTS = (0.0, 0.25, 0.5, 0.75, 1.0)  # fractions of the largest finite |L| used as thresholds


def _losses(
    outputs: Sequence[Hashable], p: Mapping[Hashable, float], p_prime: Mapping[Hashable, float]
) -> np.ndarray:
    losses = np.empty(len(outputs))
    for i, y in enumerate(outputs):
        a, b = p.get(y, 0.0), p_prime.get(y, 0.0)
        if a == 0 and b == 0:
            raise InternalError("an output that the declared distributions both exclude was drawn")
        losses[i] = np.inf if b == 0 else -np.inf if a == 0 else np.log(a / b)
    return losses


def audit_outputs(
    outputs_x: Sequence[Hashable],
    outputs_x_prime: Sequence[Hashable],
    p: Mapping[Hashable, float],
    p_prime: Mapping[Hashable, float],
    claim: Claim,
    *,
    alpha: float = ALPHA,
) -> AuditResult:
    """The most violating (set, claim point) for samples on x and x′ against the claim."""
    samples = len(outputs_x)
    if len(outputs_x_prime) != samples or samples == 0:
        raise InternalError("the audit needs the same number of outputs on x and x′")
    finite = [
        abs(np.log(p[y] / p_prime[y])) for y in p if p.get(y, 0) > 0 and p_prime.get(y, 0) > 0
    ]
    top = max(finite, default=0.0)
    thresholds = sorted({top * c for c in LOSS_CUTS if top * c > 0} | {np.inf})
    loss_x, loss_x_prime = _losses(outputs_x, p, p_prime), _losses(outputs_x_prime, p, p_prime)
    return audit_losses(loss_x, loss_x_prime, thresholds, claim, alpha)
