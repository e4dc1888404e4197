"""Lazy re-exports for the subpackages' `__init__`: a name is imported on first use.

A subpackage's public API is one import away (`from dprelease.release import draw_release`)
without importing every module it holds: the command line starts without numpy, pandas or
OpenDP, and a page imports only what it uses. Library code imports from the module itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def lazy_attribute(package: str, homes: Mapping[str, str], name: str) -> Any:
    """`package.name`, imported from the module `homes[name]` of the package."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{package}.{home}"), name)
