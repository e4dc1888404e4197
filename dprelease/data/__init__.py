"""CONFIDENTIAL data: read files (CSV, Parquet, Excel), encode onto the plan's domains and
count into TrueCounts, domain coverage, record fingerprints for the ledger.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "EncodedData": "count",
    "RecordFingerprint": "fingerprint",
    "TrueCounts": "count",
    "count": "count",
    "domain_coverage": "coverage",
    "encode": "count",
    "fingerprint_table": "fingerprint",
    "load_data": "count",
    "read_data": "read",
}

__all__ = [
    "EncodedData",
    "RecordFingerprint",
    "TrueCounts",
    "count",
    "domain_coverage",
    "encode",
    "fingerprint_table",
    "load_data",
    "read_data",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
