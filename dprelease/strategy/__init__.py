"""Measurement strategy (issue 10): what to measure, the accountant, the exact LS error.

- `domain`: the plan's columns as attributes (a hierarchy chain is one attribute with levels)
  and its tables as marginals.
- `residual`: the exact expected error of least-squares reconstruction (residual basis).
- `chain`: the hierarchy attribute's information matrix, inverted exactly on its tree.
- `optimise`: the budget split (multiplicative updates; SLSQP under pure DP).
- `select`: `select_strategy`, the public entry point; cached per table set.
- `accountant`: `choose_accountant` for `accounting: auto`.
- `topdown`: non-negative whole tables that keep their parents' sums (post-processing).
"""

from dprelease.strategy.accountant import AccountantChoice, choose_accountant
from dprelease.strategy.select import (
    MeasuredMarginal,
    Strategy,
    TableAccuracy,
    WorkloadTable,
    select_strategy,
)

__all__ = [
    "AccountantChoice",
    "MeasuredMarginal",
    "Strategy",
    "TableAccuracy",
    "WorkloadTable",
    "choose_accountant",
    "select_strategy",
]
