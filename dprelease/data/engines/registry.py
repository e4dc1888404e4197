"""The counting engines, registered once (issue 36.2): a name, what it reads, how it counts.

The CLI's `--engine` choices, its help, `count_data`'s dispatch and the dashboard's hints all
ask this tuple; no other module spells an engine's name (`tests/unit/test_registry_names.py`).
An engine is one module in this package with an `engine_count(source, plan, limits, run)` function
returning a `CountResult`; adding one is that module and one line in `ENGINES`.

This module imports no engine: DuckDB and PySpark are optional, and a module is imported only
when its engine counts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dprelease.errors import DataError, quote

if TYPE_CHECKING:
    from dprelease.data.engines.result import BatchAccumulator, CountResult
    from dprelease.data.engines.source import DataSource
    from dprelease.data.fingerprint import RecordFingerprint
    from dprelease.data.read import SizeLimits
    from dprelease.plan.model import Plan

AUTO = "auto"  # not an engine: the choice `choose_engine` makes for the source and the plan


@dataclass(frozen=True)
class EngineChoice:
    """The engine a user asked for (a registered name, or `AUTO`) and, for an engine that
    `takes_master`, where its cluster's master is: what a file's data carry to the count, so
    no caller names one engine's options (issue 36.2)."""

    name: str = AUTO
    master: str | None = None

    def run(self, new_accumulator: Callable[[], BatchAccumulator] | None = None) -> EngineRun:
        return EngineRun(self.master, new_accumulator)


@dataclass(frozen=True)
class EngineRun:
    """How one count runs: where a cluster engine's master is, and the accumulator a
    streaming engine shows every record batch (the ledger's fingerprint)."""

    master: str | None = None
    new_accumulator: Callable[[], BatchAccumulator] | None = None


@dataclass(frozen=True)
class CountingEngine:
    name: str
    summary: str  # `--engine`'s help: what it is good for
    module: str  # the module holding `engine_count`, imported when the engine counts
    reads_every_format: bool = False  # Stata, SPSS, SAS too (a format read in batches here)
    reads_uris: bool = False  # counts records where they live, given a `scheme://` address
    streams_batches: bool = False  # shows every batch to the accumulator while counting
    takes_master: bool = False  # runs on a cluster (`--spark-master`)

    def count(
        self, source: DataSource, plan: Plan, limits: SizeLimits, run: EngineRun
    ) -> CountResult:
        """Count with this engine: its module's `engine_count`."""
        counted: Callable[[DataSource, Plan, SizeLimits, EngineRun], CountResult]
        counted = importlib.import_module(self.module).engine_count
        return counted(source, plan, limits, run)

    def fingerprint_remote(
        self, source: DataSource, limits: SizeLimits, run: EngineRun, accumulator: Any
    ) -> RecordFingerprint:
        """The records' fingerprint made where a URI's records live (an engine that
        `reads_uris`): its module's `engine_fingerprint`; only the parts come back."""
        made: Callable[[DataSource, SizeLimits, EngineRun, Any], RecordFingerprint]
        made = importlib.import_module(self.module).engine_fingerprint
        return made(source, limits, run, accumulator)


ENGINES: tuple[CountingEngine, ...] = (
    CountingEngine(
        "arrow",
        "streams record batches here in bounded memory",
        f"{__package__}.arrow",
        reads_every_format=True,
        streams_batches=True,
    ),
    CountingEngine(
        "duckdb",
        "one GROUPING SETS query, larger-than-memory files",
        f"{__package__}.duckdb",
    ),
    CountingEngine(
        "spark",
        "the same query on a Spark cluster",
        f"{__package__}.spark",
        reads_uris=True,
        takes_master=True,
    ),
)

ENGINE_CHOICES: tuple[str, ...] = (AUTO, *(e.name for e in ENGINES))
"""What `--engine` takes: auto, then every registered engine."""


def registered(name: str) -> CountingEngine:
    """The registered engine called `name` (one-line DataError naming the choices)."""
    for entry in ENGINES:
        if entry.name == name:
            return entry
    raise DataError(f"Unknown engine {quote(name)}; choose one of {', '.join(ENGINE_CHOICES)}.")


def first(has: Callable[[CountingEngine], bool]) -> CountingEngine:
    """The first registered engine with a property, e.g. the one that reads URIs."""
    return next(e for e in ENGINES if has(e))


def engines_help() -> str:
    """`--engine`'s help, from the registry."""
    each = "; ".join(f"{e.name}: {e.summary}" for e in ENGINES)
    return f"what counts the data: {AUTO} (default, picks one), or {each}"
