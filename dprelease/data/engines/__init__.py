"""Counting engines, registered in `registry` (a name, what it reads, how it counts); what
`auto` picks and the one entry point, `count_data`, are `counting`'s.

Public names are re-exported lazily (imported on first use): the CLI reads the registry to
build its parser without loading an engine, the readers or pyarrow.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "BatchAccumulator": "result",
    "CountResult": "result",
    "ENGINE_CHOICES": "registry",
    "check_record_width": "counting",
    "choose_engine": "counting",
    "count_data": "counting",
    "locate": "counting",
    "scan_records": "counting",
}

__all__ = [
    "ENGINE_CHOICES",
    "BatchAccumulator",
    "CountResult",
    "check_record_width",
    "choose_engine",
    "count_data",
    "locate",
    "scan_records",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
