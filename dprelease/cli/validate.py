"""`dprelease validate PLAN [--data DATA]`: every problem of the plan at once, then the data
report (on stderr, for the data holder only) when there are data."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from dprelease.cli.codebook import declared_notes
from dprelease.cli.options import (
    add_cells_option,
    add_data_argument,
    add_data_options,
    data_location,
    file_data,
    load_plan,
)
from dprelease.cli.text import print_data_report
from dprelease.errors import DPReleaseError, one_line

if TYPE_CHECKING:
    from dprelease.plan.model import Plan


def add_parser(commands: Any) -> None:
    validate = commands.add_parser("validate", help="check the plan and the data")
    validate.add_argument("plan", help="plan file (.yaml or .json)")
    add_data_argument(validate)
    add_data_options(validate)
    add_cells_option(validate)


def run(args: argparse.Namespace) -> int:
    from dprelease.stats.allocation import allocate

    try:
        plan = load_plan(args)
        allocation = allocate(plan)
    except DPReleaseError as error:
        for problem in error.problems:
            sys.stderr.write(f"error: {one_line(problem)}\n")
        return 2
    for note in allocation.advice:
        print(f"note: {note}")
    if args.data or plan.data:
        if plan.statistics or plan.discoveries or not plan.tables:
            _validate_statistics_data(args, plan)  # issue 16
        else:
            print_data_report(file_data(args, plan).count(plan), plan)
        for note in declared_notes(plan, data_location(plan, args.data)):
            print(f"note: {note}")
    statistics = f", {len(plan.statistics)} statistics" if plan.statistics else ""  # issue 16
    cells = sum(t.cells for t in allocation.tables)
    print(f"ok: {len(plan.tables)} tables, {cells} cells{statistics}")
    return 0


def _validate_statistics_data(args: argparse.Namespace, plan: Plan) -> None:
    """Check that the data have the statistics' columns; count the tables that need no
    discovered domain; print the data report (the statistics' figures too)."""
    from dprelease.release.service import with_statistics

    data = file_data(args, plan)
    statistics = data.statistics(plan)
    discovered = {d.column for d in plan.discoveries}
    tables = tuple(t for t in plan.tables if not discovered & set(t.by))
    counted = None
    if tables:
        counted = data.count(dataclasses.replace(plan, tables=tables, discoveries=()))
    print_data_report(with_statistics(counted, statistics, plan), plan)
    if discovered and not tables:
        sys.stderr.write("note: tables over discovered columns are counted at release.\n")
