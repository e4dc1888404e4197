"""Measurement strategy (issue 10): what to measure, the accountant, the exact LS error.

- `domain`: the plan's columns as attributes (a hierarchy chain is one attribute with levels)
  and its tables as marginals.
- `residual`: the exact expected error of least-squares reconstruction (residual basis).
- `chain`: the hierarchy attribute's information matrix, inverted exactly on its tree.
- `optimise`: the budget split (multiplicative updates, and a drop search under pure DP).
- `merge`: under pure DP, unions of two measured marginals where one beats its two parts.
- `cost`: the error model's size and each search's work, from the tables alone (issue 25).
- `select`: `select_strategy`, the public entry point; cached per table set. It is given
  the accountant (`StrategyAccountant`: its shape and the noise its shares buy), so the
  strategy sits below accounting/, which asks it for `accounting: auto` (`accounting.auto`)
  and `strategy: auto` (`accounting.strategy_allocation`).
- `topdown`: non-negative whole tables that keep their parents' sums (post-processing).

Public names are re-exported lazily (imported on first use).
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "MeasuredMarginal": "select",
    "Strategy": "select",
    "TableAccuracy": "select",
    "WorkloadTable": "select",
    "select_strategy": "select",
}

__all__ = [
    "MeasuredMarginal",
    "Strategy",
    "TableAccuracy",
    "WorkloadTable",
    "select_strategy",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
