"""What every engine returns: the true counts and the data report, as the in-memory path does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from dprelease.accounting.counted import counted_tables
from dprelease.data.count import TrueCounts
from dprelease.data.report import DataReport
from dprelease.plan.model import Plan

BatchAccumulator = Callable[[pa.RecordBatch], Any]
"""A callable over every record batch of the data, all columns, as parsed (e.g. a fingerprint)."""


@dataclass(frozen=True, repr=False)
class CountResult:
    """CONFIDENTIAL: true counts and the data report of one pass over the data."""

    counts: TrueCounts
    report: DataReport
    engine: str
    accumulator: BatchAccumulator | None = None  # the one that saw every batch, if asked for

    @property
    def rows(self) -> int:
        """Rows counted (after the unit cap)."""
        return self.report.rows_kept

    def __repr__(self) -> str:
        return f"CountResult(<confidential counts and report>, engine={self.engine!r})"


def frozen_counts(counts: Mapping[str, np.ndarray], rows_read: int) -> TrueCounts:
    for array in counts.values():
        array.setflags(write=False)
    return TrueCounts(MappingProxyType(dict(counts)), rows_read)


def empty_counts(plan: Plan) -> dict[str, np.ndarray]:
    return {t.name: np.zeros(t.cells(plan.schema), np.int64) for t in counted_tables(plan)}
