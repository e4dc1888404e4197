"""Counting with the registered engines: each returns the same `CountResult` (true counts +
data report); `count_data` is the one entry point.

- `arrow`: streams record batches through the in-memory path's encode and count (bounded
  memory; `unit: row` only); it is the loop where a per-batch accumulator plugs in.
- `duckdb`: one GROUPING SETS query, larger-than-memory files, exact `unit: id` caps.
- `spark`: the same query on a Spark cluster (`--spark-master`).

`auto` picks DuckDB for Parquet (measured 3× faster than Arrow at 100 M rows, see the README)
and for `unit: id`; Arrow for CSV (measured as fast as DuckDB's own query), when DuckDB is
not installed, and when an accumulator must see every batch. An .xlsx (at most 200 MB
unpacked) is read whole, once, on every engine (`arrow.count_whole`). A format that only Arrow
reads (Stata, SPSS, SAS: its registered reader's `engines`) is streamed by Arrow in its
reader's own batches.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dprelease.data import formats
from dprelease.data.engines.registry import AUTO, EngineChoice, first, registered
from dprelease.data.engines.result import BatchAccumulator, CountResult
from dprelease.data.engines.source import DataSource, describe, remote
from dprelease.data.read import SizeLimits
from dprelease.errors import DataError, InternalError
from dprelease.limits import MAX_RECORD_COLUMNS
from dprelease.plan.model import Plan


def _duckdb_installed() -> bool:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def choose_engine(source: DataSource, plan: Plan, accumulating: bool = False) -> str:
    """The engine `auto` uses for this source and plan (this package's policy, with the
    measurements behind it in the docstring above)."""
    from dprelease.data.engines.duckdb import duckdb_can_read

    if source.remote:
        return first(lambda e: e.reads_uris).name
    if plan.unit.kind == "id":
        return "duckdb"
    if accumulating or source.fmt != "parquet" or not duckdb_can_read(source):
        return "arrow"
    return "duckdb" if _duckdb_installed() else "arrow"


def locate(location: str | Path, limits: SizeLimits) -> DataSource:
    """The source a location names: a URI (`scheme://`, only Spark reads it) or a local file
    or folder, described without reading a record."""
    text = str(location)
    return remote(text) if "://" in text else describe(location, limits)


def count_data(
    location: str | Path,
    plan: Plan,
    *,
    engine: str | EngineChoice = AUTO,
    limits: SizeLimits | None = None,
    new_accumulator: Callable[[], BatchAccumulator] | None = None,
) -> CountResult:
    """Count the plan's tables over a file or folder with the chosen engine.

    `new_accumulator` makes a callable that sees every record batch (all columns); an engine
    that `streams_batches` and an .xlsx (read whole on every engine) run it in their counting
    pass; another engine's count is followed by its own pass. A URI's records are never
    brought to this machine: there the accumulator must be a `FingerprintAccumulator`, given
    the cluster's fingerprint.
    """
    choice = engine if isinstance(engine, EngineChoice) else EngineChoice(engine)
    limits = limits or SizeLimits()
    source = locate(location, limits)
    if new_accumulator is not None:
        check_record_width(source)
    asked = None if choice.name == AUTO else registered(choice.name)
    if source.remote and asked is not None and not asked.reads_uris:
        readers = first(lambda e: e.reads_uris).name
        raise DataError(
            f"Only the {readers} engine reads '{source.location}'; give --engine {readers}."
        )
    reader = formats.reader(source.fmt)
    if reader.whole:
        from dprelease.data.engines.arrow import count_whole

        return count_whole(source, plan, limits, new_accumulator)
    chosen = asked or registered(choose_engine(source, plan, new_accumulator is not None))
    if not (reader.every_engine or chosen.reads_every_format):  # Stata, SPSS, SAS (issue 36)
        streaming = first(lambda e: e.reads_every_format)
        if asked is not None:
            raise DataError(
                f"The {asked.name} engine does not read {reader.label} ({source.where}); use "
                f"--engine {streaming.name}, or {AUTO}."
            )
        chosen = streaming
    result = chosen.count(source, plan, limits, choice.run(new_accumulator))
    if new_accumulator is None or chosen.streams_batches:
        return result
    accumulator = scan_records(source, limits, new_accumulator(), choice)
    return CountResult(result.counts, result.report, result.engine, accumulator)


def check_record_width(source: DataSource) -> None:
    """Refuse, from the header alone, records too wide to fingerprint whole (issue 25)."""
    if len(source.columns) > MAX_RECORD_COLUMNS:
        raise DataError(
            f"{source.where} has {len(source.columns):,} columns; a release charged to a ledger "
            f"fingerprints every column of every record, at most {MAX_RECORD_COLUMNS:,}. "
            "Keep only the columns you need in the file, or release with --no-ledger."
        )


def scan_records(
    source: DataSource,
    limits: SizeLimits,
    accumulator: BatchAccumulator,
    engine: EngineChoice | None = None,
) -> BatchAccumulator:
    """Show `accumulator` every record of any source: a local file or folder batch by batch
    (`arrow.scan_all`), a URI where it lives, by the engine that reads URIs (a fingerprint
    only)."""
    check_record_width(source)
    if not source.remote:
        from dprelease.data.engines.arrow import scan_all

        return scan_all(source, limits, accumulator)
    from dprelease.data.fingerprint import FingerprintAccumulator

    if not isinstance(accumulator, FingerprintAccumulator):
        raise InternalError("a URI's records stay on the cluster: only a fingerprint is made")
    remote_engine = first(lambda e: e.reads_uris)
    run = (engine or EngineChoice(remote_engine.name)).run()
    accumulator.include(remote_engine.fingerprint_remote(source, limits, run, accumulator))
    return accumulator
