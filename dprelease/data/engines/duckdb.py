"""The DuckDB engine: one streaming GROUPING SETS query over the file (see `grouped`).

DuckDB reads CSV and Parquet in parallel, only the columns the query names, and spills to a
temporary folder when a `unit: id` cap needs more memory than MEMORY_LIMIT: it counts files
larger than memory on one machine. A CSV that DuckDB cannot parse strictly (not UTF-8, ragged
lines) is handed to the Arrow engine, which reads it or says in one line what is wrong.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dprelease.data.engines.arrow import block_bytes
from dprelease.data.engines.grouped import counts_from_groups, grouping_query, positional
from dprelease.data.engines.registry import EngineRun
from dprelease.data.engines.result import CountResult
from dprelease.data.engines.source import DataSource, check_columns
from dprelease.data.read import SizeLimits
from dprelease.errors import DataError
from dprelease.plan.model import Plan

MEMORY_LIMIT = "600MB"  # DuckDB's own buffers; the rest of a release stays well under 1 GB
DUCKDB_LINE_BYTES = 2 << 20  # its buffers are 16 lines: longer lines go to the Arrow engine


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def literal_path(path: str) -> str:
    """A path as DuckDB reads exactly that file: its glob characters (`*`, `?`, `[`) in
    brackets, so `d[12].csv` is the file of that name, not `d1.csv` and `d2.csv`."""
    return _literal(re.sub(r"([*?\[])", r"[\1]", str(Path(path).absolute())))


def _relation(source: DataSource) -> str:
    """The source read with its columns named by position (`grouped.positional`)."""
    names = positional(source.columns)
    if source.fmt == "parquet":
        files = ", ".join(literal_path(f) for f in source.files)
        return f"read_parquet([{files}]) AS source({', '.join(names)})"
    columns = ", ".join(f"{_literal(n)}: 'VARCHAR'" for n in names)
    return (
        f"read_csv({literal_path(source.location)}, header = true, auto_detect = false, "
        f"columns = {{{columns}}}, delim = {_literal(source.delimiter)}, quote = '\"', "
        "escape = '\"', strict_mode = true, null_padding = false, "
        f"max_line_size = {min(block_bytes(), DUCKDB_LINE_BYTES)})"
    )


def duckdb_can_read(source: DataSource) -> bool:
    """CSV in UTF-8 (DuckDB's own encoding) or Parquet; Excel never."""
    return source.fmt == "parquet" or (source.fmt == "csv" and source.encodings[:1] == ("utf-8",))


def count_duckdb(source: DataSource, plan: Plan, limits: SizeLimits) -> CountResult:
    """True counts and data report from one DuckDB query."""
    import duckdb

    from dprelease.data.engines.arrow import count_arrow

    if not duckdb_can_read(source):
        if plan.unit.kind == "row":
            return count_arrow(source, plan, limits)
        raise DataError(
            f"{source.where} is not UTF-8 CSV or Parquet, which DuckDB needs to cap the rows "
            "per unit; save it as UTF-8 CSV or Parquet."
        )
    check_columns(source, plan)
    spill = tempfile.mkdtemp(prefix="dprelease-duckdb-")
    try:
        connection: Any = duckdb.connect(
            config={"memory_limit": MEMORY_LIMIT, "temp_directory": spill}
        )
        query = grouping_query(plan, _relation(source), source.columns, "random()")
        try:
            groups = connection.sql(query).to_arrow_table()
        except duckdb.Error:
            if source.fmt == "csv" and plan.unit.kind == "row":
                return count_arrow(source, plan, limits)  # reads it, or says what is wrong
            raise DataError(
                f"{source.where} could not be read by DuckDB; check that it is well-formed "
                f"{'UTF-8 CSV' if source.fmt == 'csv' else 'Parquet'}."
            ) from None
        finally:
            connection.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return counts_from_groups(plan, groups, source.where, "duckdb", limits.max_rows)


def engine_count(source: DataSource, plan: Plan, limits: SizeLimits, run: EngineRun) -> CountResult:
    """The registry's entry (`registry.ENGINES`): one query; an accumulator gets its own pass."""
    return count_duckdb(source, plan, limits)
