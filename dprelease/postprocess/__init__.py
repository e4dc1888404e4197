"""Post-processing of noisy counts (no privacy cost): sub-table links, consistency by
weighted least squares, controlled rounding, the step pipeline, accuracy after it.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "PostprocessResult": "pipeline",
    "TableAccuracy": "accuracy",
    "accuracy_after_postprocessing": "accuracy",
    "postprocess": "pipeline",
}

__all__ = [
    "PostprocessResult",
    "TableAccuracy",
    "accuracy_after_postprocessing",
    "postprocess",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
