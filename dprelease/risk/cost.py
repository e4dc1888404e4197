"""Admission of the `risk` and `reconstruct` stages (issue 35), from the arguments, the plan
and the data file's size, before a record is read.

`risk`: the classes, l-diversity and t-closeness are passes over the rows of the named
columns, and the generalisation search is at most `generalise.MAX_NODES` more: all grow with
the rows, held by the read's limits. `reconstruct`: the plan decides the record space (the
product of the rebuilt columns' domains, at most `area_tables.MAX_RECORD_TYPES`, refused here
before the data are read) and the memory of each tried area's true record counts; the MILPs
are held by the user's own `--max-areas` × `--seconds-per-area`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dprelease.admission import Admitted, DataSize, Estimate, admit, register
from dprelease.risk.area_tables import default_level, workload
from dprelease.risk.generalise import MAX_NODES

_MIN_VALUE_BYTES = 2  # a one-character value and its separator
_NS_PER_VALUE = 30  # one pass over one column's value (group codes, bincounts)
_TYPE_BYTES = 8  # per tried area and record type: its true record counts, kept for the score


@dataclass(frozen=True)
class RiskTask:
    """What `risk` is asked: the columns read (quasi-identifiers and the sensitive one)."""

    columns: int
    generalise: bool = True


@dataclass(frozen=True)
class ReconstructTask:
    """What `reconstruct` is asked (its options as the command and the Risk page give them)."""

    plan: Any
    level: str | None = None
    per_area: bool = False
    max_areas: int = 100
    seconds_per_area: float = 2.0
    release_dir: str | Path | None = None

    def attack_options(self) -> dict[str, Any]:
        """The options `reconstruction_attack` takes from the task: the same that were admitted."""
        return {
            "level": self.level,
            "per_area": self.per_area,
            "max_areas": self.max_areas,
            "seconds_per_area": self.seconds_per_area,
            "release_dir": self.release_dir,
        }


def risk_estimate(task: RiskTask, data: DataSize) -> Estimate:
    values = (data.bytes or 0) // _MIN_VALUE_BYTES
    if data.rows is not None:
        values = data.rows * task.columns
    passes = 4 + (MAX_NODES if task.generalise else 0)
    path = f"measures and at most {MAX_NODES} generalisations" if task.generalise else "measures"
    return Estimate(
        "risk", values * passes * _NS_PER_VALUE, values * 8 * 3, "MAX_DATA_MB", path, True
    )


def reconstruct_estimate(task: ReconstructTask, data: DataSize) -> Estimate:
    """The record space from the plan (refused above MAX_RECORD_TYPES, in one line naming it,
    before the data are read); the areas' true counts in memory; the MILPs' own time bound."""
    plan = task.plan
    level = task.level or default_level(plan)
    types = 0
    if task.release_dir is None:  # a release's tables are read and checked with it
        types = math.prod(workload(plan, level, per_area=task.per_area).sizes(plan))
    areas = min(task.max_areas, plan.schema[level].size) if level in plan.schema.names else 0
    memory = types * areas * _TYPE_BYTES
    path = (
        f"≤ {task.max_areas} areas × ≤ {task.seconds_per_area:g} s per MILP "
        "(--max-areas, --seconds-per-area)"
    )
    advice = "attack fewer tables, or fewer areas (--max-areas)"
    return Estimate("reconstruct", types * 50, memory, "MAX_RECORD_TYPES", path, advice=advice)


register("risk", risk_estimate)
register("reconstruct", reconstruct_estimate)


def admit_risk(task: RiskTask, data: DataSize) -> Admitted:
    """The `risk` command's and the Risk page's admission, before the data are read."""
    return admit(task, data, ("risk",))


def admit_reconstruct(task: ReconstructTask, data: DataSize) -> Admitted:
    """The `reconstruct` command's and the Risk page's admission, before the data are read."""
    return admit(task, data, ("reconstruct",))
