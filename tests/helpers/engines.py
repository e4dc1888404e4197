"""The engines a test runs on: arrow and duckdb always, spark where PySpark and Java are."""

from __future__ import annotations

import os
import shutil

import pytest

from dprelease.data.engines import registry


def spark_available() -> bool:
    """True in CI (a missing Java or PySpark must fail there, never skip), else when both are."""
    if os.environ.get("CI"):
        return True
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return shutil.which("java") is not None


needs_spark = pytest.mark.skipif(not spark_available(), reason="no PySpark or Java here")
ENGINES = [  # every registered engine; a cluster engine only where Spark runs
    pytest.param(e.name, marks=needs_spark) if e.takes_master else e.name for e in registry.ENGINES
]
