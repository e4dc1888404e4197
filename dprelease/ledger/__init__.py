"""The budget ledger: lifetime spend per data set against a cap (SQLite, or PostgreSQL for a
team), charged once or not at all; its values, accounts and the `ledger` command.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "Account": "values",
    "AlreadyChargedError": "values",
    "Balance": "values",
    "Ledger": "store",
    "LedgerEntry": "values",
    "dataset_key": "files",
    "default_ledger_path": "files",
    "shortfall": "values",
}

__all__ = [
    "Account",
    "AlreadyChargedError",
    "Balance",
    "Ledger",
    "LedgerEntry",
    "dataset_key",
    "default_ledger_path",
    "shortfall",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
