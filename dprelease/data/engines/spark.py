"""The Spark engine: the same GROUPING SETS query (see `grouped`) run by Spark SQL.

For data that do not fit on one machine: the executors read and group the data where they
live (any path Spark reads: local, HDFS, S3), and only the grouped counts (one row per
distinct combination of the plan's values, never a record) reach the driver, where noise,
post-processing and export run as for every engine. `--spark-master` picks the cluster
(default `local[*]`: every core of this machine).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from dprelease.data.engines.grouped import counts_from_groups, grouping_query
from dprelease.data.engines.result import CountResult
from dprelease.data.engines.source import DataSource, check_columns
from dprelease.data.read import SizeLimits
from dprelease.errors import DataError
from dprelease.plan.model import Plan

DEFAULT_MASTER = "local[*]"
SPARK_INSTALL = (  # the Spark extra is one install line (issue 24: not in requirements.txt)
    "the spark engine needs PySpark: pip install -r requirements-spark.txt "
    "(or pip install 'dprelease[spark]'), and Java 17 or later."
)


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def spark_session(master: str = DEFAULT_MASTER) -> Any:
    """A Spark session on `master`, quiet (no UI, errors only in the log)."""
    from dprelease.data.engines.java import check_java

    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DataError(SPARK_INSTALL) from None
    check_java()  # before Spark starts: a missing or old Java is one line, exit 2
    session = (
        SparkSession.builder.master(master)
        .appName("dprelease")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def count_spark(
    source: DataSource, plan: Plan, limits: SizeLimits, master: str = DEFAULT_MASTER
) -> CountResult:
    """True counts and data report from one Spark SQL query; only grouped counts come back."""
    if source.fmt == "excel":
        raise DataError("The spark engine reads CSV and Parquet; save the workbook as CSV.")
    session = spark_session(master)
    reader = session.read
    if source.fmt == "csv":
        frame = reader.options(
            header=True,
            sep=source.delimiter,
            quote='"',
            escape='"',
            encoding=source.encodings[0],
            multiLine=True,
            mode="FAILFAST",
            inferSchema=False,
        ).csv(source.location)
    else:
        frame = reader.parquet(*(source.files or (source.location,)))
    if source.remote:
        source = DataSource(source.location, source.fmt, source.where, tuple(frame.columns))
    check_columns(source, plan)
    view = "dprelease_source"
    frame.createOrReplaceTempView(view)
    query = grouping_query(plan, view, quote_identifier, "rand()")
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        groups = session.sql(query).toArrow()
    except (Py4JError, PySparkException, pa.ArrowException) as error:  # text may quote data
        raise DataError(
            f"{source.where} could not be read by Spark ({type(error).__name__}); check that "
            "it is well-formed CSV or Parquet."
        ) from None
    finally:
        session.catalog.dropTempView(view)
    return counts_from_groups(plan, groups, source.where, "spark", limits.max_rows)
