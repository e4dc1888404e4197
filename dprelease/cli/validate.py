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
    from dprelease.data.coverage import LeftOut
    from dprelease.plan.model import Plan


def add_parser(commands: Any) -> None:
    validate = commands.add_parser("validate", help="check the plan and the data")
    validate.add_argument("plan", help="plan file (.yaml or .json)")
    add_data_argument(validate)
    validate.add_argument(
        "--allow-left-out",
        action="store_true",
        help="a table or statistic that leaves out more than 1%% of the rows is a note, not a "
        "problem (as for `release --allow-left-out`)",
    )
    add_data_options(validate)
    add_cells_option(validate)


def run(args: argparse.Namespace) -> int:
    from dprelease.data.coverage import check_left_out, left_out_items
    from dprelease.release.admitted import admit_plan
    from dprelease.stats.allocation import allocate

    try:
        plan = load_plan(args)
        admit_plan(plan)  # issue 35: before the allocation and before any data are read
        allocation = allocate(plan)
    except DPReleaseError as error:
        for problem in error.problems:
            sys.stderr.write(f"error: {one_line(problem)}\n")
        return 2
    for note in allocation.advice:
        print(f"note: {note}")
    if args.data or plan.data:
        if plan.statistics or plan.discoveries or not plan.tables:
            left_out = _validate_statistics_data(args, plan)  # issue 16
        else:
            counted = file_data(args, plan).count(plan)
            print_data_report(counted, plan)
            left_out = left_out_items(plan, counted.report, counted.counts.counts)
        for note in declared_notes(plan, data_location(plan, args.data)):
            print(f"note: {note}")
        # Issue 37: the rule of the dashboard's confirmation and of `release`'s refusal.
        over = check_left_out(left_out, allowed=True)
        for item in over:
            if args.allow_left_out:
                sys.stderr.write(f"note: {one_line(item.problem())}\n")
            else:
                sys.stderr.write(
                    f"error: {one_line(item.problem())} (`release` refuses it unless given "
                    "--allow-left-out)\n"
                )
        if over and not args.allow_left_out:
            return 2
    statistics = f", {len(plan.statistics)} statistics" if plan.statistics else ""  # issue 16
    cells = sum(t.cells for t in allocation.tables)
    print(f"ok: {len(plan.tables)} tables, {cells} cells{statistics}")
    return 0


def _validate_statistics_data(args: argparse.Namespace, plan: Plan) -> list[LeftOut]:
    """Check that the data have the statistics' columns; count the tables that need no
    discovered domain; print the data report (the statistics' figures too); return what each
    table and statistic leaves out (a table over a discovered column: nothing yet)."""
    from dprelease.data.coverage import left_out_items
    from dprelease.release.service import with_statistics

    data = file_data(args, plan)
    statistics = data.statistics(plan)
    discovered = {d.column for d in plan.discoveries}
    tables = tuple(t for t in plan.tables if not discovered & set(t.by))
    counted = None
    if tables:
        counted = data.count(dataclasses.replace(plan, tables=tables, discoveries=()))
    report = with_statistics(counted, statistics, plan)
    print_data_report(report, plan)
    if discovered and not tables:
        sys.stderr.write("note: tables over discovered columns are counted at release.\n")
    counts = counted.counts.counts if counted is not None else {}
    items = left_out_items(plan, report.report, counts)
    return [i for i in items if i.kind == "statistic" or i.name in counts]
