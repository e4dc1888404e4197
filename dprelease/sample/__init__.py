"""The synthetic census-like sample data set and its plan.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "generate_sample": "generator",
    "sample_plan_dict": "generator",
    "write_sample": "generator",
    "write_sample_plan": "generator",
}

__all__ = [
    "generate_sample",
    "sample_plan_dict",
    "write_sample",
    "write_sample_plan",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
