"""The command line: plan, release, validate, sample (contract v1, section 2).

Exit status 0 on success; 2 for anything the user can fix, with one line ``error: ...`` on
stderr and no traceback; 1 for an internal error. Each command imports only what it needs,
so that start-up stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from dprelease import commands as core
from dprelease.errors import DPReleaseError, one_line, quote
from dprelease.graph import command as graph_command
from dprelease.ldp import command as ldp_command
from dprelease.ledger import command as ledger_command
from dprelease.limits import MAX_DATA_MB
from dprelease.release import code_command
from dprelease.risk import command as risk_command

# Commands that live in their own modules: each has add_parser(commands) and run(args) -> int.
SUBCOMMANDS: dict[str, Any] = {
    "ledger": ledger_command,
    "ldp": ldp_command,
    "export": code_command,
    "graph": graph_command,
}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one `error:` line and exit 2, like every user error."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {one_line(message)} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


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


def _max_data_option(parser: argparse.ArgumentParser) -> None:
    """The data options of `release` and `validate`: size limits and the counting engine."""
    from dprelease.limits import MAX_ROWS

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
        choices=("auto", "arrow", "duckdb", "spark"),
        default="auto",
        help="what counts the data: auto (default), arrow, duckdb or spark (see the README)",
    )
    parser.add_argument(
        "--spark-master", metavar="URL", help="Spark master for --engine spark (default local[*])"
    )


def _cells(text: str) -> int:
    return _whole_number(text, "cells")


def _max_cells_option(parser: argparse.ArgumentParser) -> None:
    from dprelease.limits import MAX_CELLS

    parser.add_argument(
        "--max-cells",
        type=_cells,
        default=MAX_CELLS,
        help=f"refuse a plan with more cells (or domain values) in all (default {MAX_CELLS:,})",
    )


def _parser() -> _Parser:
    parser = _Parser(
        prog="dprelease",
        description="Plan a privacy budget and publish differentially private tables.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    plan = commands.add_parser("plan", help="print the allocation and expected accuracy")
    plan.add_argument("plan", help="plan file (.yaml or .json)")
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    _max_cells_option(plan)
    release = commands.add_parser("release", help="draw the noise once and write the release")
    release.add_argument("plan", help="plan file (.yaml or .json)")
    release.add_argument("--data", help="data file (overrides the plan's `data`)")
    release.add_argument("--out", required=True, help="new directory, or a path ending in .zip")
    release.add_argument("--json", action="store_true", help="print the summary as JSON")
    ledger = release.add_mutually_exclusive_group()
    ledger.add_argument(
        "--ledger",
        nargs="?",
        const="",
        metavar="PATH",
        help="the budget ledger the release is charged to (default, and with no PATH: "
        "$DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite); the records pick its account",
    )
    ledger.add_argument(
        "--no-ledger",
        action="store_true",
        help='charge no ledger (a warning; metadata.json then says "ledger": null)',
    )
    release.add_argument(
        "--cap", type=float, metavar="EPSILON", help="set this data set's lifetime ε cap first"
    )
    _max_data_option(release)
    _max_cells_option(release)
    validate = commands.add_parser("validate", help="check the plan and the data")
    validate.add_argument("plan", help="plan file (.yaml or .json)")
    validate.add_argument("--data", help="data file (overrides the plan's `data`)")
    _max_data_option(validate)
    _max_cells_option(validate)
    sample = commands.add_parser("sample", help="write the synthetic census-like sample data")
    sample.add_argument("--rows", type=int, required=True, help="number of rows")
    sample.add_argument("--out", required=True, help="CSV file to write")
    sample.add_argument("--seed", type=int, help="seed for a reproducible sample")
    sample.add_argument("--plan", help="also write a matching plan (.yaml or .json) here")
    for module in SUBCOMMANDS.values():
        module.add_parser(commands)
    risk_command.add_parsers(commands)  # risk, reconstruct
    return parser


COMMANDS: dict[str, Any] = {
    "plan": core.run_plan,
    "release": core.run_release,
    "validate": core.run_validate,
    "sample": core.run_sample,
    **{name: module.run for name, module in SUBCOMMANDS.items()},
    "risk": risk_command.run_risk,
    "reconstruct": risk_command.run_reconstruct,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return int(COMMANDS[args.command](args))
    except DPReleaseError as error:
        sys.stderr.write(f"error: {one_line(str(error))}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted; nothing was released.\n")
        return 130
    except OSError as error:  # e.g. disk full, read-only folder: the user can fix it
        where = f" ({error.filename})" if error.filename else ""
        sys.stderr.write(
            f"error: {one_line(f'{error.strerror or type(error).__name__}{where}')}.\n"
        )
        return 2
    except MemoryError:
        sys.stderr.write("error: not enough memory for this data set and plan.\n")
        return 2
    except Exception as error:  # a bug: say so in one line; the traceback on request
        if os.environ.get("DPRELEASE_DEBUG"):
            raise
        # The message of an arbitrary exception may quote data: print only where it happened.
        frame = traceback.extract_tb(error.__traceback__)[-1]
        sys.stderr.write(
            f"internal error: {type(error).__name__} in {Path(frame.filename).name}:"
            f"{frame.lineno} (a bug in dprelease; set DPRELEASE_DEBUG=1 for details)\n"
        )
        return 1
