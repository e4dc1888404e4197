"""The privacy audit of a composite measurement set: `strategy: auto` under pure DP.

One person moves one cell of *every* measured marginal at once, so the release's privacy loss
is the sum of the measurements' losses. The audit draws each measurement with the release's
own secure sampler at neighbouring counts, sums the claimed losses, and runs the same
rejection sets and Clopper–Pearson bounds as the single-table audit (tests/helpers/audit.py)
against the whole release's ε. It must pass for the honest noise and fail when every
measurement's scale is × 0.8 (which spends 1.25 ε).
"""

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.accounting.mechanisms import Noise
from dprelease.plan.parse import parse_plan
from dprelease.release.noise import preview_noise
from helpers.audit import (
    BASE_COUNT,
    SET_MASSES,
    Claim,
    audit_losses,
    privacy_loss,
    secure_sampler,
)

SHIFT = np.array([1])


def composite_plan():
    return parse_plan(
        {
            "columns": {
                "sex": {"kind": "categorical", "domain": ["F", "M"]},
                "race": {"kind": "categorical", "domain": ["A", "B", "C"]},
                "age": {"kind": "categorical", "domain": ["young", "old"]},
            },
            "tables": [
                {"name": "total", "by": []},
                {"name": "sex", "by": ["sex"]},
                {"name": "race_by_sex", "by": ["race", "sex"]},
                {"name": "age_by_sex", "by": ["age", "sex"]},
            ],
            "budget": {"accounting": "pure", "epsilon": 1.0},
        }
    )


def _losses(allocation, draw, samples):
    """The summed claimed loss of every release drawn under x and under x′."""
    loss_x = np.zeros(samples)
    loss_x_prime = np.zeros(samples)
    for m in allocation.measurements:
        x = np.full(samples, BASE_COUNT, dtype=np.int64)
        noise_x = (draw(x, m) - x).reshape(samples, 1)
        noise_x_prime = (draw(x + 1, m) - x).reshape(samples, 1)
        loss_x += privacy_loss(m.noise, noise_x, SHIFT)
        loss_x_prime += privacy_loss(m.noise, noise_x_prime, SHIFT)
    return loss_x, loss_x_prime


def _thresholds(allocation):
    """Quantiles of the claimed composite loss, from a fixed-seed preview sample (a priori)."""
    rng = np.random.default_rng(20240601)
    loss, _ = _losses(allocation, lambda x, m: x + preview_noise(m.noise, x.size, rng), 50_000)
    cut = np.quantile(loss, [1 - q for q in SET_MASSES], method="higher")
    return np.array([t for t in np.unique(cut) if np.mean(loss >= t) < 0.999])


@pytest.mark.slow
def test_composite_measurement_set_keeps_its_epsilon_and_the_audit_sees_overspending():
    allocation = allocate(composite_plan())
    assert allocation.derived and len(allocation.measurements) >= 2
    claim = Claim(np.array([allocation.total.epsilon]), np.array([0.0]), "pure ε of the release")
    thresholds = _thresholds(allocation)
    samples = 40_000

    def honest(x, m):
        return secure_sampler(x, m.noise, m.sensitivity)

    def under(x, m):
        return secure_sampler(x, Noise(m.noise.mechanism, m.noise.scale * 0.8), m.sensitivity)

    passed = audit_losses(*_losses(allocation, honest, samples), thresholds, claim)
    assert not passed.violated, passed
    caught = audit_losses(*_losses(allocation, under, samples), thresholds, claim)
    assert caught.violated, f"the audit has no power against scale × 0.8: {caught}"
