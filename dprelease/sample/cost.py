"""Admission of the `sample` stage (issue 35): the generated rows, from the arguments alone.

The rows asked for are the work (about 3 µs each here, the CSV included),
held by the generator's own MAX_ROWS: refused here in one line before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from dprelease.admission import Admitted, DataSize, Estimate, admit, register
from dprelease.sample.generator import SAMPLE_COLUMNS, check_sample_args

_NS_PER_VALUE = 250  # 200,000 rows: 0.6 s of CPU here
_BYTES_PER_VALUE = 16


@dataclass(frozen=True)
class SampleTask:
    rows: int
    seed: int | None = None


def sample_estimate(task: SampleTask, data: DataSize) -> Estimate:
    check_sample_args(task.rows, task.seed)
    values = task.rows * len(SAMPLE_COLUMNS)
    return Estimate(
        "sample",
        values * _NS_PER_VALUE,
        values * _BYTES_PER_VALUE,
        "sample.generator.MAX_ROWS",
        f"{task.rows:,} rows",
        data_bound=True,  # the rows are the data asked for, held by MAX_ROWS
    )


register("sample", sample_estimate)


def admit_sample(task: SampleTask) -> Admitted:
    """The `sample` command's admission, before the file is written."""
    return admit(task, None, ("sample",))
