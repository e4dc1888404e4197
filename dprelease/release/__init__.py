"""Drawing and publishing: secure noise (`noise`), the draw where true counts meet noise
(`draw`), export, the HTML report, preview metrics, and `publish.charged_release`, the one
flow that charges the ledger (CLI and dashboard).

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "Account": "publish",
    "ErrorMetrics": "metrics",
    "NoisyTable": "draw",
    "Preview": "draw",
    "Published": "publish",
    "Release": "draw",
    "charged_release": "publish",
    "deliver": "publish",
    "draw_preview": "draw",
    "draw_release": "draw",
    "error_metrics": "metrics",
    "release_files": "export",
    "release_zip": "export",
    "report_html": "report",
    "write_release": "export",
}

__all__ = [
    "Account",
    "ErrorMetrics",
    "NoisyTable",
    "Preview",
    "Published",
    "Release",
    "charged_release",
    "deliver",
    "draw_preview",
    "draw_release",
    "error_metrics",
    "release_files",
    "release_zip",
    "report_html",
    "write_release",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
