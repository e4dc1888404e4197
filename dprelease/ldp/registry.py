"""The frequency protocols by name. Code asks the registry, never compares a name."""

from __future__ import annotations

from dprelease.errors import quote
from dprelease.ldp.base import FrequencyProtocol, LdpError
from dprelease.ldp.direct import DirectEncoding
from dprelease.ldp.hadamard import HadamardResponse
from dprelease.ldp.hashing import BinaryLocalHashing, OptimalLocalHashing
from dprelease.ldp.unary import OptimisedUnaryEncoding, SymmetricUnaryEncoding

# Order matters only for ties in the planner: the earlier protocol wins.
PROTOCOLS: dict[str, FrequencyProtocol] = {
    p.name: p
    for p in (
        DirectEncoding(),
        OptimisedUnaryEncoding(),
        OptimalLocalHashing(),
        SymmetricUnaryEncoding(),
        BinaryLocalHashing(),
        HadamardResponse(),
    )
}


def protocol(name: str) -> FrequencyProtocol:
    """The protocol called `name` (any case)."""
    found = PROTOCOLS.get(name.strip().upper())
    if found is None:
        raise LdpError(f"Unknown protocol {quote(name)}; choose one of {', '.join(PROTOCOLS)}.")
    return found
