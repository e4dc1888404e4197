"""Post-processing of noisy counts: it reads only the noisy measurements, so it costs no privacy.

The steps run in this fixed order, each switched on or off in the plan's `postprocess`:

1. ``consistent`` — make shared sub-tables agree (not built yet: reported as skipped);
2. ``clamp`` — bound every count to [lower, upper];
3. ``nonnegative`` — no count below 0;
4. ``integer`` — round to whole numbers.

Every step is idempotent: applying the pipeline twice gives the same result as once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprelease.plan import Postprocess

STEP_ORDER = ("consistent", "clamp", "nonnegative", "integer")


@dataclass(frozen=True)
class PostprocessResult:
    """Released counts per table, the steps that ran, and the ones that could not."""

    released_counts: dict[str, np.ndarray]
    steps_applied: tuple[str, ...]
    steps_skipped: tuple[str, ...]


def clamp(values: np.ndarray, lower: float | None, upper: float | None) -> np.ndarray:
    """Bound values to [lower, upper]; None leaves that side open."""
    return np.clip(values, lower, upper) if (lower is not None or upper is not None) else values


def round_to_integers(values: np.ndarray) -> np.ndarray:
    """Nearest whole number (halves to even), as int64."""
    rounded: np.ndarray = np.rint(values).astype(np.int64)
    return rounded


def postprocess(noisy_counts: dict[str, np.ndarray], settings: Postprocess) -> PostprocessResult:
    """Apply the plan's steps, in `STEP_ORDER`, to every table's noisy counts."""
    applied: list[str] = []
    skipped: list[str] = []
    released = {name: counts.astype(np.float64) for name, counts in noisy_counts.items()}
    if settings.consistent:
        skipped.append("consistent")
    lower, upper = settings.clamp
    if lower is not None or upper is not None:
        released = {name: clamp(v, lower, upper) for name, v in released.items()}
        applied.append("clamp")
    if settings.nonnegative:
        released = {name: clamp(v, 0.0, None) for name, v in released.items()}
        applied.append("nonnegative")
    if settings.integer:
        released = {name: round_to_integers(v) for name, v in released.items()}
        applied.append("integer")
    return PostprocessResult(released, tuple(applied), tuple(skipped))
