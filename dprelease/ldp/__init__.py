"""Local differential privacy: each respondent randomises their own answer.

Modules: `base` (checks, secure generator, the support-count estimator and its exact
variance), one per protocol family (`direct` GRR, `unary` SUE/OUE, `hashing` BLH/OLH,
`hadamard` HR, `numeric` 1BitMean and Duchi et al. for means), `registry` (protocols by
name), `planner` (accuracy at (ε, d, n), best protocol, central alternative), `attributes`
(split ε or sample one attribute), `simulate` (CONFIDENTIAL: randomise real data, compare
with the truth) and `command` (the `ldp` CLI).
"""

from dprelease.ldp.attributes import AttributeSchemes, compare_attribute_schemes, simulate_schemes
from dprelease.ldp.base import FrequencyProtocol, LdpError, Support, secure_generator
from dprelease.ldp.numeric import DuchiMean, OneBitMean
from dprelease.ldp.planner import (
    LdpPlan,
    plan_ldp,
    respondents_needed,
    variance_against_epsilon,
)
from dprelease.ldp.registry import PROTOCOLS, protocol
from dprelease.ldp.simulate import (
    EncodedColumn,
    Simulation,
    encode_column,
    project_to_simplex,
    simulate,
)

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
