"""CONFIDENTIAL error metrics: a preview's noisy counts against the true ones.

These compare against true counts, so they are for the data holder's screen only and are
never part of a release (a release reports simulated accuracy instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ErrorMetrics:
    """Mean absolute error, root mean square error, the largest error, and the share of cells
    whose error exceeds the per-cell margin of error (expected: about 1 − confidence)."""

    mae: float
    rmse: float
    max_abs: float
    share_beyond_moe: float


def error_metrics(true_counts: np.ndarray, estimate: np.ndarray, moe: float) -> ErrorMetrics:
    error = np.asarray(estimate, dtype=np.float64) - np.asarray(true_counts, dtype=np.float64)
    if error.size == 0:
        return ErrorMetrics(0.0, 0.0, 0.0, 0.0)
    absolute = np.abs(error)
    return ErrorMetrics(
        mae=float(absolute.mean()),
        rmse=float(np.sqrt(np.mean(error**2))),
        max_abs=float(absolute.max()),
        share_beyond_moe=float(np.mean(absolute > moe)),
    )
