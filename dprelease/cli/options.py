"""Arguments several subcommands share (size limits, the engine, the cell limit), and the plan
and the data they name."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from dprelease.data.engines.registry import AUTO, ENGINE_CHOICES, EngineChoice, engines_help
from dprelease.errors import quote
from dprelease.limits import MAX_CELLS, MAX_DATA_MB, MAX_ROWS

if TYPE_CHECKING:
    from dprelease.data.read import SizeLimits
    from dprelease.plan.model import Plan
    from dprelease.release.service import FileData


def _whole_number(text: str, unit: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of {unit}, got {quote(text)}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _megabytes(text: str) -> int:
    return _whole_number(text, "MB")


def _rows(text: str) -> int:
    return _whole_number(text, "rows")


def _cells(text: str) -> int:
    return _whole_number(text, "cells")


def add_data_argument(parser: argparse.ArgumentParser) -> None:
    """`--data FILE`: every format the readers' registry reads (`dprelease.data.formats`)."""
    from dprelease.data.formats import FORMAT_NAMES

    parser.add_argument(
        "--data",
        help=f"data file ({FORMAT_NAMES}) or a folder of Parquet parts; overrides the plan's "
        "`data`",
    )


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """The data options of `release` and `validate`: size limits and the counting engine."""
    parser.add_argument(
        "--max-data-mb",
        type=_megabytes,
        default=MAX_DATA_MB,
        help=f"refuse data larger than this many MB on disk or decoded (default {MAX_DATA_MB})",
    )
    parser.add_argument(
        "--max-rows",
        type=_rows,
        default=MAX_ROWS,
        help=f"refuse data with more rows, counted from metadata first (default {MAX_ROWS:,})",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINE_CHOICES,
        default=AUTO,
        help=engines_help() + " (see the README)",
    )
    parser.add_argument(
        "--spark-master", metavar="URL", help="Spark master for --engine spark (default local[*])"
    )


def add_cells_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-cells",
        type=_cells,
        default=MAX_CELLS,
        help=f"refuse a plan with more cells (or domain values) in all (default {MAX_CELLS:,})",
    )


def load_plan(args: argparse.Namespace) -> Plan:
    from dprelease.plan.parse import load_plan as load

    plan = load(args.plan, max_cells=args.max_cells)
    if plan.postprocess.synthetic:  # issue 27: the model's bound, before any data is read
        from dprelease.synthetic.junction import check_model

        check_model(plan)
    return plan


def size_limits(args: argparse.Namespace) -> SizeLimits:
    from dprelease.data.read import SizeLimits

    return SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)


def data_location(plan: Plan, data: str | None) -> Path | str:
    """The data to read: a file, a folder of part files, or a URI only Spark reads (kept as text:
    a Path would fold `hdfs:///x` into `hdfs:/x`)."""
    from dprelease.errors import DataError

    if data is not None and "://" in data:
        return data
    if data is None and plan.data is not None and "://" in plan.data:
        return plan.data
    path = Path(data) if data else plan.data_path
    if path is None:
        raise DataError("No data file: give --data FILE or set `data:` in the plan.")
    if path.is_dir():
        return path  # a folder of Parquet parts (Spark, Hive); the engines check it
    if not path.is_file():
        raise DataError(f"Data file '{path}' does not exist.")
    return path


def file_data(args: argparse.Namespace, plan: Plan) -> FileData:
    """The data of `release` and `validate` as the release service reads them."""
    from dprelease.release.service import FileData

    engine = EngineChoice(args.engine, args.spark_master)
    return FileData(data_location(plan, args.data), engine, size_limits(args))
