"""Admission (issue 35): every command's work, estimated before it starts.

Each stage of the work (the plan's cells, reading and counting the data, the strategy, the
statistics, consistency, the accuracy simulation, the synthetic fit, the Preview's draws,
graphs, local DP, disclosure risk, the reconstruction attack, the sample data) registers one
estimator here, in its own module: from the plan (or the command's arguments) and the data's
size alone (rows, bytes and columns as the file's header or metadata announce them, never a
record), it returns the work (ns on this kind of machine), the memory, the limit it is held
to and the path it will take (fewer simulations, fewer rounds, a cheaper method), or raises
a one-line `ResourceError`/`PlanError` naming that limit and what to change.

`file_size` is what a command knows of a local file before reading it. `admit(plan, data,
stages)` runs the stages' estimators and adds up the plan's share (the data's reading aside:
its own limits, `--max-rows` and `--max-data-mb`, hold it), against `ADMISSION_WORK_NS` and
`ADMISSION_MEMORY_BYTES`. Every command and page that works calls it first, before the data
are read, any noise is drawn or anything is charged; each stage takes, when it runs, the path
its estimator chose (the same function decides, so the two cannot disagree).

The ground floor: it imports only errors and limits; stages register from above.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dprelease.errors import InternalError, ResourceError
from dprelease.limits import ADMISSION_MEMORY_BYTES, ADMISSION_WORK_NS


@dataclass(frozen=True)
class DataSize:
    """What is known of the data before a record is read (None: not known)."""

    rows: int | None = None
    bytes: int | None = None
    columns: int | None = None


@dataclass(frozen=True)
class Estimate:
    """One stage's estimated cost and the path it takes."""

    stage: str
    work_ns: int
    memory_bytes: int
    limit: str  # the limit it is held to (a name in dprelease.limits)
    path: str = "full"
    data_bound: bool = False  # grows with the data (held by the data's own limits)
    advice: str = "drop tables or statistics, or use coarser domains"  # what to change


def file_size(location: object) -> DataSize:
    """The bytes of a local file, as the commands know it before reading (nothing of a folder,
    a URI or a file that is not there: the read then reports it)."""
    if location is None or "://" in str(location):
        return DataSize()
    try:
        return DataSize(bytes=os.path.getsize(str(location)))
    except OSError:
        return DataSize()


Estimator = Callable[[Any, DataSize], Estimate]
"""(plan or None, the data's size) -> Estimate; raises ResourceError/PlanError to refuse."""

STAGES: dict[str, Estimator] = {}


def register(name: str, estimator: Estimator) -> Estimator:
    """Register a stage's estimator (each stage's own module, once, at import)."""
    STAGES[name] = estimator
    return estimator


@dataclass(frozen=True)
class Admitted:
    """The estimates of an admitted command, stage by stage, and the paths they take."""

    estimates: tuple[Estimate, ...]

    def path(self, stage: str) -> str:
        return next((e.path for e in self.estimates if e.stage == stage), "none")

    @property
    def work_ns(self) -> int:
        return sum(e.work_ns for e in self.estimates if not e.data_bound)

    @property
    def memory_bytes(self) -> int:
        return sum(e.memory_bytes for e in self.estimates if not e.data_bound)

    def describe(self) -> str:
        return "; ".join(
            f"{e.stage}: {e.path}, {e.work_ns / 1e9:.2g} s, {e.memory_bytes / 1e6:.0f} MB"
            for e in self.estimates
        )


def admit(plan: Any, data: DataSize | None, stages: Sequence[str]) -> Admitted:
    """Estimate every stage of a command and refuse in one line if the whole does not fit."""
    found = []
    for name in stages:
        estimator = STAGES.get(name)
        if estimator is None:
            raise InternalError(f"no admission estimator for stage '{name}' (not imported?)")
        found.append(estimator(plan, data or DataSize()))
    admitted = Admitted(tuple(found))
    if admitted.work_ns > ADMISSION_WORK_NS or admitted.memory_bytes > ADMISSION_MEMORY_BYTES:
        plan_bound = [e for e in found if not e.data_bound]
        worst = max(plan_bound, key=lambda e: (e.work_ns, e.memory_bytes))
        raise ResourceError(
            f"The plan would take about {admitted.work_ns / 1e9:,.1f} s and "
            f"{admitted.memory_bytes / 1e6:,.0f} MB, above ADMISSION_WORK_NS "
            f"({ADMISSION_WORK_NS / 1e9:g} s) or ADMISSION_MEMORY_BYTES "
            f"({ADMISSION_MEMORY_BYTES / 1e6:,.0f} MB); most of it in {worst.stage} "
            f"({worst.limit}): {worst.advice}."
        )
    return admitted
