"""Synthetic microdata from the released tables (issue 27): a junction-tree model of the
published tables, its integer clique tables, records that tabulate to them. Reads only the
post-processed measurements; no privacy cost.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "Microdata": "microdata",
    "check_model": "junction",
    "synthesize": "microdata",
}

__all__ = ["Microdata", "check_model", "synthesize"]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
