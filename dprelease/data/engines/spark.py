"""The Spark engine: the same GROUPING SETS query (see `grouped`) run by Spark SQL.

For data that do not fit on one machine: the executors read and group the data where they
live (any path Spark reads: local, HDFS, S3), and only the grouped counts (one row per
distinct combination of the plan's values, never a record) reach the driver, where noise,
post-processing and export run as for every engine. `--spark-master` picks the cluster
(default `local[*]`: every core of this machine).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from dprelease.data.engines.grouped import counts_from_groups, grouping_query, positional
from dprelease.data.engines.registry import EngineRun
from dprelease.data.engines.result import CountResult
from dprelease.data.engines.source import DataSource, check_columns
from dprelease.data.fingerprint import FingerprintAccumulator, RecordFingerprint
from dprelease.data.read import SizeLimits
from dprelease.errors import DataError
from dprelease.plan.model import Plan

DEFAULT_MASTER = "local[*]"
SPARK_INSTALL = (  # the Spark extra is one install line (issue 24: not in requirements.txt)
    "the spark engine needs PySpark: pip install -r requirements-spark.txt "
    "(or pip install 'dprelease[spark]'), and Java 17 or later."
)
_GLOB = re.compile(r"([*?\[\]{}\\])")


def literal_path(path: str) -> str:
    """A path or URI as Spark reads exactly that file or folder: Hadoop's glob characters
    escaped, so `d[12].csv` is the file of that name, not `d1.csv` and `d2.csv`."""
    return _GLOB.sub(r"\\\1", path)


def spark_session(master: str = DEFAULT_MASTER) -> Any:
    """A Spark session on `master`, silent: the JVM's own output (its log, which quotes
    malformed records with their stack traces, and its start-up notes) goes nowhere, unless
    DPRELEASE_DEBUG is set. Column names are case-sensitive (`SEX` and `sex` are two)."""
    from dprelease.data.engines.java import check_java

    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession
    except ImportError:
        raise DataError(SPARK_INSTALL) from None
    check_java()  # before Spark starts: a missing or old Java is one line, exit 2
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName("dprelease")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", "8")
        .set("spark.sql.execution.arrow.pyspark.enabled", "true")
        .set("spark.sql.caseSensitive", "true")
    )
    if SparkContext._active_spark_context is None:  # the one way to ask if one is running
        if master.startswith("local"):  # local executors run this Python (it has pyarrow)
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        quiet: dict[str, Any] = {}
        if not os.environ.get("DPRELEASE_DEBUG"):
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        try:
            gateway = launch_gateway(conf, popen_kwargs=quiet)  # type: ignore[no-untyped-call]
        except (OSError, RuntimeError):  # no Java, or the JVM did not start
            raise DataError(
                "The spark engine could not start Spark (it needs Java 17 or later); set "
                "DPRELEASE_DEBUG=1 to see Spark's own output."
            ) from None
        SparkContext(conf=conf, gateway=gateway)
    session = SparkSession.builder.config(conf=conf).getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    return session


def _require_pyspark() -> None:
    """A missing PySpark is one line naming the install (before any of its modules is used)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise DataError(SPARK_INSTALL) from None


@contextmanager
def _spark_errors(where: str) -> Iterator[None]:
    """Spark's errors as one line that names no value (their text may quote a record)."""
    _require_pyspark()
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        with warnings.catch_warnings():  # PySpark's notes on pandas versions and the like
            warnings.simplefilter("ignore")
            yield
    except (Py4JError, PySparkException, pa.ArrowException) as error:
        raise DataError(
            f"{where} could not be read by Spark ({type(error).__name__}); check that it is "
            "well-formed CSV or Parquet."
        ) from None


def _frame(session: Any, source: DataSource) -> Any:
    """The source as a DataFrame, under its own column names (nothing is read yet)."""
    reader = session.read
    if source.fmt == "csv":
        return reader.options(
            header=True,
            sep=source.delimiter,
            quote='"',
            escape='"',
            encoding=source.encodings[0],
            multiLine=True,
            mode="FAILFAST",
            inferSchema=False,
        ).csv(literal_path(source.location))
    return reader.parquet(*(literal_path(f) for f in source.files or (source.location,)))


def count_spark(
    source: DataSource, plan: Plan, limits: SizeLimits, master: str = DEFAULT_MASTER
) -> CountResult:
    """True counts and data report from one Spark SQL query; only grouped counts come back."""
    if source.fmt == "excel":
        raise DataError("The spark engine reads CSV and Parquet; save the workbook as CSV.")
    with _spark_errors(source.where):
        session = spark_session(master)
        frame = _frame(session, source)
    if source.remote:
        source = DataSource(source.location, source.fmt, source.where, tuple(frame.columns))
    check_columns(source, plan)
    view = "dprelease_source"
    frame.toDF(*positional(source.columns)).createOrReplaceTempView(view)
    query = grouping_query(plan, view, source.columns, "rand()", rounding="bround")
    try:
        with _spark_errors(source.where):
            groups = session.sql(query).toArrow()
    finally:
        session.catalog.dropTempView(view)
    return counts_from_groups(plan, groups, source.where, "spark", limits.max_rows)


def fingerprint_spark(
    source: DataSource,
    limits: SizeLimits,
    master: str = DEFAULT_MASTER,
    accumulator: FingerprintAccumulator | None = None,
) -> RecordFingerprint:
    """The records' fingerprint, made where the data live: each partition's part on its
    executor (`fingerprint.fingerprint_batches`, with `accumulator`'s settings), only the
    parts reach the driver. The fingerprint's modules travel by value, so executors need
    pyarrow and numpy, not dprelease."""
    _require_pyspark()
    from pyspark import cloudpickle

    from dprelease.data import cell_hash, fingerprint, fingerprint_v1

    for module in (cell_hash, fingerprint_v1, fingerprint):
        cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]
    settings = accumulator or FingerprintAccumulator()
    with _spark_errors(source.where):
        frame = _frame(spark_session(master), source)
        parts = frame.mapInArrow(settings.batches(), fingerprint.PART_SCHEMA)
        result = RecordFingerprint.of_parts(parts.toArrow())
    limits.check(source.where, rows=result.rows)
    return result


def engine_count(source: DataSource, plan: Plan, limits: SizeLimits, run: EngineRun) -> CountResult:
    """The registry's entry (`registry.ENGINES`): the query on `run.master`'s cluster."""
    return count_spark(source, plan, limits, run.master or DEFAULT_MASTER)


def engine_fingerprint(
    source: DataSource, limits: SizeLimits, run: EngineRun, accumulator: FingerprintAccumulator
) -> RecordFingerprint:
    """The registry's entry for a URI's records: fingerprinted on `run.master`'s cluster."""
    return fingerprint_spark(source, limits, run.master or DEFAULT_MASTER, accumulator)
