"""Admission of the `preview` stage (issue 35): the Preview page's noisy draws.

A preview draws the tables once with numpy's sampler and post-processes them (the
`consistency` stage's run), then reruns the post-processing for its accuracy picture: as many
of PREVIEW_SIMULATIONS reruns as ACCURACY_WORK_NS affords (`simulations_within`, the same
function `draw_preview` applies, so the page takes the path estimated here).
"""

from __future__ import annotations

from typing import Any

from dprelease.admission import DataSize, Estimate, register
from dprelease.postprocess.accuracy import simulations_within
from dprelease.postprocess.cost import run_ns

PREVIEW_SIMULATIONS = 10  # enough for a stable picture, a few seconds at most


def preview_simulations(plan: Any) -> int:
    """The accuracy reruns a preview of `plan` takes."""
    return simulations_within(plan, PREVIEW_SIMULATIONS)


def preview_estimate(plan: Any, data: DataSize) -> Estimate:
    count = preview_simulations(plan)
    path = f"{count} simulated draws" if count else "no accuracy simulation"
    return Estimate("preview", count * run_ns(plan, typical=True), 0, "ACCURACY_WORK_NS", path)


register("preview", preview_estimate)
