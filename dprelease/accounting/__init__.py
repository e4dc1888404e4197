"""Privacy accounting, no data needed: composition and conversions, the noise mechanisms
(`mechanisms/`, one object each in a registry), the accountants (`accountants/`, likewise:
pure, zcdp, approx, advanced; `auto` chooses among them), budget splitting and the count
tables' allocation (a whole plan's, statistics included, is `dprelease.stats.allocation`'s),
tradeoffs.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "Allocation": "allocation",
    "Guarantee": "composition",
    "TableBudget": "allocation",
    "advanced_or_basic": "composition",
    "allocate": "allocation",
    "basic_composition": "composition",
    "compare_accountants": "tradeoffs",
    "compare_scenarios": "tradeoffs",
    "delta_advice": "allocation",
    "epsilon_delta_curve": "tradeoffs",
    "epsilon_to_zcdp": "composition",
    "moe_curves": "tradeoffs",
    "pure_to_zcdp": "composition",
    "zcdp_guarantee": "composition",
    "zcdp_to_epsilon": "composition",
}

__all__ = [
    "Allocation",
    "Guarantee",
    "TableBudget",
    "advanced_or_basic",
    "allocate",
    "basic_composition",
    "compare_accountants",
    "compare_scenarios",
    "delta_advice",
    "epsilon_delta_curve",
    "epsilon_to_zcdp",
    "moe_curves",
    "pure_to_zcdp",
    "zcdp_guarantee",
    "zcdp_to_epsilon",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
