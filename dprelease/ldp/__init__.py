"""Local differential privacy: each respondent randomises their own answer.

Modules: `base` (checks, secure generator, the support-count estimator and its exact
variance), one per protocol family (`direct` GRR, `unary` SUE/OUE, `hashing` BLH/OLH,
`hadamard` HR, `numeric` 1BitMean and Duchi et al. for means), `registry` (protocols by
name), `planner` (accuracy at (ε, d, n), best protocol, central alternative), `attributes`
(split ε or sample one attribute), `simulation` (CONFIDENTIAL: randomise real data, compare
with the truth) and `command` (the `ldp` CLI). Domains too large to list: `prefix` (values
as bytes, prefix fingerprints, the variance of a sampled estimate), `linear_hashing` (local
hashing over GF(2), every hashed value at once), `heavy_hitters` (the prefix extending
method), `itemsets` (set-valued answers: padding and sampling) and `heavy_command` (their
CLI runners).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names are loaded on first use, so `import dprelease.cli` stays light
    from dprelease.ldp.attributes import (
        AttributeSchemes,
        compare_attribute_schemes,
        simulate_schemes,
    )
    from dprelease.ldp.base import FrequencyProtocol, LdpError, Support, secure_generator
    from dprelease.ldp.numeric import DuchiMean, OneBitMean
    from dprelease.ldp.planner import (
        LdpPlan,
        plan_ldp,
        respondents_needed,
        variance_against_epsilon,
    )
    from dprelease.ldp.registry import PROTOCOLS, protocol
    from dprelease.ldp.simulation import (
        EncodedColumn,
        Simulation,
        encode_column,
        project_to_simplex,
        simulate,
    )

_HOMES = {
    "AttributeSchemes": "attributes",
    "compare_attribute_schemes": "attributes",
    "simulate_schemes": "attributes",
    "FrequencyProtocol": "base",
    "LdpError": "base",
    "Support": "base",
    "secure_generator": "base",
    "DuchiMean": "numeric",
    "OneBitMean": "numeric",
    "LdpPlan": "planner",
    "plan_ldp": "planner",
    "respondents_needed": "planner",
    "variance_against_epsilon": "planner",
    "PROTOCOLS": "registry",
    "protocol": "registry",
    "EncodedColumn": "simulation",
    "Simulation": "simulation",
    "encode_column": "simulation",
    "project_to_simplex": "simulation",
    "simulate": "simulation",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dprelease.ldp' has no attribute {name!r}")
    return getattr(importlib.import_module(f"dprelease.ldp.{home}"), name)


__all__ = [
    "PROTOCOLS",
    "AttributeSchemes",
    "DuchiMean",
    "EncodedColumn",
    "FrequencyProtocol",
    "LdpError",
    "LdpPlan",
    "OneBitMean",
    "Simulation",
    "Support",
    "compare_attribute_schemes",
    "encode_column",
    "plan_ldp",
    "project_to_simplex",
    "protocol",
    "respondents_needed",
    "secure_generator",
    "simulate",
    "simulate_schemes",
    "variance_against_epsilon",
]
