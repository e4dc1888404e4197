"""Admission of the commands that release or plan (issue 35): the stages they run, the
statistics' estimate, and the data's size as known before a record is read.

`admit_plan` is what `plan`, `validate` and the dashboard's checks run; `admit_release` what
the CLI's `release` and the release service run first (the Release page through the service),
before the allocation starts, the ledger is opened, anything is charged or any noise is
drawn; `admit_preview` what the Preview page runs before it counts. Each stage registers its own
estimator (`dprelease.admission`); importing this module imports every one of them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import dprelease.data.size_limits
import dprelease.plan.size
import dprelease.postprocess.accuracy
import dprelease.postprocess.cost
import dprelease.release.preview_cost
import dprelease.strategy.cost
import dprelease.synthetic.junction  # noqa: F401  (each registers its stage's estimator)
from dprelease.admission import Admitted, DataSize, Estimate, admit, file_size, register
from dprelease.release.sources import FileData, ReleaseData, UploadData

PLAN_STAGES = ("plan", "strategy", "statistics", "consistency", "accuracy", "synthetic")
RELEASE_STAGES = ("count", *PLAN_STAGES)
# a preview's own accuracy reruns (PREVIEW_SIMULATIONS) instead of the release's
PREVIEW_STAGES = ("count", "plan", "strategy", "statistics", "consistency", "preview", "synthetic")

_STAT_NS_PER_VALUE = 60  # reading a statistic's values and sorting or summing them, per row


def statistics_estimate(plan: Any, data: DataSize) -> Estimate:
    """Reading and computing the plan's statistics: each reads its columns (a sort for the
    rank-based ones), about rows × log2(rows) per statistic; held by the data's limits."""
    count = len(plan.statistics) + len(plan.discoveries)
    rows = data.rows or (data.bytes or 0) // 8
    work = count * rows * int(math.log2(rows + 2)) * _STAT_NS_PER_VALUE
    path = f"{count} statistics" if count else "none"
    memory = rows * 8 * 4 if count else 0
    return Estimate("statistics", work, memory, "MAX_DATA_MB", path, data_bound=True)


register("statistics", statistics_estimate)


def data_size(data: ReleaseData | None) -> DataSize:
    """The bytes of a local file or an upload (the rows are counted while reading)."""
    if isinstance(data, UploadData):
        return DataSize(bytes=len(data.data))
    if isinstance(data, FileData) and Path(str(data.location)).is_file():
        return file_size(data.location)
    return DataSize()


def admit_plan(plan: Any, data: DataSize | None = None) -> Admitted:
    """`plan`, `validate` and the dashboard's checks: every stage but the data's reading."""
    return admit(plan, data, PLAN_STAGES)


def admit_release(plan: Any, data: ReleaseData | DataSize | None) -> Admitted:
    """The release's admission: every stage, the data's size included."""
    return admit(plan, data if isinstance(data, DataSize) else data_size(data), RELEASE_STAGES)


def admit_preview(plan: Any, data: ReleaseData | DataSize | None) -> Admitted:
    """The Preview page's admission, before the upload is counted or any noise drawn."""
    return admit(plan, data if isinstance(data, DataSize) else data_size(data), PREVIEW_STAGES)
