"""DISCLOSIVE: a column's domain read from the data, when the user explicitly chooses it (the
caller records `domain_source: data`, which the release metadata reports). In `data/` because
it reads values; the plan's own edits (`plan/edit.py`) never do."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dprelease.data.columns import dictionary_parts
from dprelease.errors import PlanError, quote
from dprelease.plan.edit import MAX_DOMAIN_FROM_DATA, domain_values


def domain_from_data(column: pa.ChunkedArray, name: str) -> list[str | int]:
    """DISCLOSIVE: the distinct values present in the data, sorted. The caller must record
    `domain_source: data`, which the release metadata reports."""
    labels, codes = dictionary_parts(column, name)
    present = np.unique(codes[codes < len(labels)])  # len(labels) marks a missing value
    # one type for the column (domain_values), so numbers sort as numbers, text as text
    values = sorted(
        domain_values({str(labels[i]) for i in present}),
        key=lambda v: (v, "") if isinstance(v, int) else (0, v),
    )
    if not values:
        raise PlanError(f"Column {quote(name)} has no values to take a domain from.")
    if len(values) > MAX_DOMAIN_FROM_DATA:
        raise PlanError(
            f"Column {quote(name)} has {len(values):,} distinct values (at most "
            f"{MAX_DOMAIN_FROM_DATA:,}); treat it as numeric with bins, or ignore it."
        )
    return values
