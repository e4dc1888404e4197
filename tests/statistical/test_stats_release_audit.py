"""Privacy audit of a discovered domain through the release path (issue 16): the plan's
allocation calibrates the discovery, the rows come from a `StatSource` (as the CLI and the
dashboard read them), and `release.statistics.discover_domains` draws with OpenDP.

As in test_stats_discovery: values are noised independently, so n distinct values each
counted k times are n independent releases of "a value counted k times". Neighbours: a value
at the threshold τ (x) and one more row of it (x′); the claim is the discovery's own ε.
"""

import dataclasses

import numpy as np
import pyarrow as pa

from dprelease.accounting.mechanisms.registry import Noise
from dprelease.plan.parse import parse_plan
from dprelease.release.statistics import discover_domains
from dprelease.stats.allocation import allocate
from dprelease.stats.discovery import release_probability
from dprelease.stats.source import StatSource
from helpers.audit import Claim
from helpers.stats_audit import audit_outputs

N = 60_000  # at 20,000 the bound for scale × 0.8 came within 0.01 of the claim in CI
PLAN = {
    "version": 1,
    "columns": {"code": {"kind": "categorical", "domain": {"discover": {"min_count": 1}}}},
    "tables": [{"name": "by_code", "by": ["code"]}],
    "budget": {"accounting": "approx", "epsilon": 2.0, "delta": 1e-3},
}


def _fates(plan, allocation, count: int) -> list[tuple[str, ...]]:
    codes = pa.array([f"v{i}" for i in range(N) for _ in range(count)]).dictionary_encode()
    source = StatSource(pa.table({"code": codes}), None)
    released = set(discover_domains(plan, allocation, source, None)["code"].values)
    return [("v",) if f"v{i}" in released else () for i in range(N)]


def _pmf(count: int, threshold: int, scale: float) -> dict[tuple[str, ...], float]:
    p = release_probability(count, threshold, scale)
    return {(): 1 - p, ("v",): p}


def test_discovered_domain_through_the_release_path_keeps_its_epsilon() -> None:
    plan = parse_plan(PLAN)
    allocation = allocate(plan)
    honest = allocation.discoveries[0]
    mech = honest.mechanism
    tau, scale = mech.threshold, mech.noise.scale
    claim = Claim(np.array([float(mech.epsilon)]), np.array([0.0]), "ε on a present value")
    p, p_prime = _pmf(tau, tau, scale), _pmf(tau + 1, tau, scale)
    fair = audit_outputs(
        _fates(plan, allocation, tau), _fates(plan, allocation, tau + 1), p, p_prime, claim
    )
    assert not fair.violated, fair
    weak_mech = dataclasses.replace(mech, noise=Noise("discrete_laplace", scale * 0.8))
    weak = dataclasses.replace(
        allocation, discoveries=(dataclasses.replace(honest, mechanism=weak_mech),)
    )
    caught = audit_outputs(_fates(plan, weak, tau), _fates(plan, weak, tau + 1), p, p_prime, claim)
    assert caught.violated, caught
