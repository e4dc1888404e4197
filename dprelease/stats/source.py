"""CONFIDENTIAL: the rows the statistics and discoveries of a plan read, after the unit cap.

Counting streams (`dprelease.data.engines`); a statistic needs each kept row's group and
value, so the columns it uses (its `by` columns, its own column, the discovered columns and
the unit id) are read whole, in memory, with the same size limits. The unit cap keeps at most
`max_rows` rows per id, chosen at random (`dprelease.data.count`), before anything is read
from the rows. Nothing here is exported; only noisy outputs leave the library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from dprelease.data.columns import MissingColumnsError, dictionary_parts, float_values
from dprelease.data.count import _unit_cap, encode_columns
from dprelease.data.formats import allowed
from dprelease.data.read import SizeLimits, read_data
from dprelease.data.report import DataReport, StatisticReport, model_report, statistic_report
from dprelease.errors import DataError, quote
from dprelease.plan.model import Plan
from dprelease.plan.stat_spec import stat_columns
from dprelease.plan.statistic import StatisticTable
from dprelease.stats.data import StatData


def needed_columns(plan: Plan) -> list[str]:
    """Columns read for the statistics and discoveries, in a stable order."""
    names: list[str] = []
    for statistic in plan.statistics:
        names += [*statistic.by, *stat_columns(statistic.stat)]
    names += [d.column for d in plan.discoveries]
    if plan.unit.kind == "id" and plan.unit.column:
        names.append(plan.unit.column)
    return list(dict.fromkeys(names))


@dataclass(frozen=True, repr=False)
class StatSource:
    """CONFIDENTIAL: the needed columns of the kept rows (repr shows sizes only)."""

    table: pa.Table
    keep: np.ndarray | None  # rows kept by the unit cap (None: all)

    def __repr__(self) -> str:
        return f"StatSource(<confidential rows of {', '.join(self.table.column_names)}>)"

    def _kept(self, values: np.ndarray) -> np.ndarray:
        return values if self.keep is None else values[self.keep]

    def texts(self, column: str) -> list[str]:
        """Each kept row's text in `column` (missing values left out): for discovery."""
        texts, indices = dictionary_parts(self.table.column(column), column)
        kept = self._kept(indices)
        counts = np.bincount(kept, minlength=len(texts) + 1)[: len(texts)]
        rows: list[str] = []
        for text, count in zip(texts, counts.tolist(), strict=True):
            rows.extend([text] * count)
        return rows

    def stat_data(self, plan: Plan, statistic: StatisticTable) -> StatData:
        """Each kept row's flat cell over the statistic's by-columns and its value."""
        column = statistic.stat.column
        values = self._kept(float_values(self.table.column(column), column))
        names = stat_columns(statistic.stat)
        if len(names) > 1:  # a regression or PCA: every column, one row per kept row
            rows = np.column_stack(
                [self._kept(float_values(self.table.column(c), c)) for c in names]
            )
            cells = np.zeros(rows.shape[0], dtype=np.int64)
            return StatData(cells, values, 1, rows=rows)
        shape = tuple(plan.schema[name].size for name in statistic.by)
        codes, _ = encode_columns(self.table, plan.schema, statistic.by, keep=self.keep)
        cells = np.zeros(values.size, dtype=np.int64)
        left_out = np.zeros(values.size, dtype=bool)
        for name, size in zip(statistic.by, shape, strict=True):
            code = codes[name].astype(np.int64)
            left_out |= code < 0
            cells = cells * size + code
        cells[left_out] = -1
        return StatData(cells, values, max(int(np.prod(shape)), 1))

    def report(self, plan: Plan) -> DataReport:
        """CONFIDENTIAL (the data holder's report, never exported): after the unit cap, how the
        statistics' grouping columns were encoded, and each statistic's rows with no number
        (left out of it) or a number outside its bounds (clamped)."""
        discovered = {d.column for d in plan.discoveries}  # no domain to check against yet
        names = [name for s in plan.statistics for name in s.by if name not in discovered]
        _, columns = encode_columns(
            self.table, plan.schema, list(dict.fromkeys(names)), keep=self.keep
        )
        statistics = tuple(
            self._model_report(s)
            if len(stat_columns(s.stat)) > 1
            else statistic_report(
                s, self._kept(float_values(self.table.column(s.stat.column), s.stat.column))
            )
            for s in plan.statistics
        )
        rows = self.table.num_rows
        kept = rows if self.keep is None else int(np.count_nonzero(self.keep))
        return DataReport(rows, rows - kept, tuple(columns), statistics)

    def _model_report(self, statistic: StatisticTable) -> StatisticReport:
        """CONFIDENTIAL: a regression's or PCA's rows left out or clamped (`model_report`)."""
        names = stat_columns(statistic.stat)
        rows = np.column_stack([self._kept(float_values(self.table.column(c), c)) for c in names])
        return model_report(statistic, rows)


def read_stat_source(
    location: str | Path | bytes,
    plan: Plan,
    limits: SizeLimits | None = None,
    *,
    filename: str | None = None,
) -> StatSource:
    """Read the needed columns of a data file (any format `read_data` reads) and apply the
    unit cap."""
    remote = isinstance(location, str) and "://" in location
    if remote or (not isinstance(location, bytes) and Path(location).is_dir()):
        raise DataError(
            "Statistics and domain discovery read one data file in memory; give a file "
            f"({allowed()}), not a folder or a URI."
        )
    limits = limits or SizeLimits()
    numeric = list(dict.fromkeys(c for s in plan.statistics for c in stat_columns(s.stat)))
    try:
        table = read_data(
            location,
            filename=filename,
            columns=needed_columns(plan),
            numeric=numeric,
            max_bytes=limits.max_bytes,
            max_rows=limits.max_rows,
        )
    except MissingColumnsError as error:
        missing = ", ".join(quote(name) for name in error.missing)
        raise DataError(
            f"The data have no column {missing}, which the plan's statistics use."
        ) from None
    return StatSource(table, _unit_cap(table, plan.unit, None))
