"""The one rule of a data set's name (a plan's `dataset:`, the ledger account it is charged to):
1 to 200 printable characters on one line, not only spaces. The plan's parser, the ledger and
the dashboard's name field all ask here."""

from __future__ import annotations

MAX_DATASET_NAME = 200

DATASET_NAME_RULE = (
    f"dataset must be a name of 1 to {MAX_DATASET_NAME} printable characters on one line "
    "(e.g. dataset: census-2020): the ledger account the release is charged to."
)


def is_dataset_name(value: object) -> bool:
    """Whether `value` is an allowed data set name (`DATASET_NAME_RULE`)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_DATASET_NAME
        and value.isprintable()
        and bool(value.strip())
    )
