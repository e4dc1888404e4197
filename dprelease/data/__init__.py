"""CONFIDENTIAL data: read files (every format in the readers' registry, `formats`), encode
onto the plan's domains and count into TrueCounts, or count in one streaming pass (engines:
arrow, duckdb, spark); domain coverage, record fingerprints for the ledger.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "CountResult": "engines.result",
    "EncodedData": "count",
    "RecordFingerprint": "fingerprint",
    "TrueCounts": "count",
    "count": "count",
    "count_data": "engines",
    "domain_coverage": "coverage",
    "encode": "count",
    "fingerprint_table": "fingerprint",
    "load_data": "count",
    "read_data": "read",
}

__all__ = [
    "CountResult",
    "EncodedData",
    "RecordFingerprint",
    "TrueCounts",
    "count",
    "count_data",
    "domain_coverage",
    "encode",
    "fingerprint_table",
    "load_data",
    "read_data",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
