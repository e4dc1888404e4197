"""`dprelease validate PLAN [--data DATA]`: every problem of the plan at once, then the data
report (on stderr, for the data holder only) when there are data."""

from __future__ import annotations

import argparse
import dataclasses
import json
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
from dprelease.cli.text import data_report_lines, print_data_report
from dprelease.errors import DPReleaseError, one_line

if TYPE_CHECKING:
    from dprelease.data.count import EncodedData
    from dprelease.data.coverage import LeftOut
    from dprelease.data.engines.result import CountResult
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
    validate.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: notes, errors and the data report (yours only: never put "
        "it in a release)",
    )
    add_data_options(validate)
    add_cells_option(validate)


class _Output:
    """What `validate` says: lines on stdout and stderr, or one JSON object (`--json`) with the
    notes, the errors and the data holder's own report (never written to a release)."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.notes: list[str] = []
        self.errors: list[str] = []
        self.data: dict[str, Any] | None = None

    def note(self, text: str, *, stderr: bool = False) -> None:
        self.notes.append(text)
        if not self.as_json:
            (sys.stderr if stderr else sys.stdout).write(f"note: {text}\n")

    def error(self, text: str) -> None:
        self.errors.append(text)
        if not self.as_json:
            sys.stderr.write(f"error: {text}\n")

    def data_report(self, counted: EncodedData | CountResult, plan: Plan) -> None:
        if not self.as_json:
            print_data_report(counted, plan)
            return
        self.data = {**counted.report.to_dict(), "lines": list(data_report_lines(counted, plan))}

    def finish(self, code: int, summary: dict[str, int] | None = None) -> int:
        if self.as_json:
            found = {"ok": code == 0, **(summary or {}), "notes": self.notes}
            print(json.dumps({**found, "errors": self.errors, "data_report": self.data}, indent=2))
        elif summary is not None:
            statistics = f", {summary['statistics']} statistics" if summary["statistics"] else ""
            print(f"ok: {summary['tables']} tables, {summary['cells']} cells{statistics}")
        return code


def run(args: argparse.Namespace) -> int:
    from dprelease.data.coverage import check_left_out, left_out_items
    from dprelease.release.admitted import admit_plan
    from dprelease.stats.allocation import allocate

    out = _Output(getattr(args, "json", False))
    try:
        plan = load_plan(args)
        admit_plan(plan)  # issue 35: before the allocation and before any data are read
        allocation = allocate(plan)
    except DPReleaseError as error:
        for problem in error.problems:
            out.error(one_line(problem))
        return out.finish(2)
    for note in allocation.advice:
        out.note(note)
    if args.data or plan.data:
        if plan.statistics or plan.discoveries or not plan.tables:
            left_out = _validate_statistics_data(args, plan, out)  # issue 16
        else:
            counted = file_data(args, plan).count(plan)
            out.data_report(counted, plan)
            left_out = left_out_items(plan, counted.report, counted.counts.counts)
        for note in declared_notes(plan, data_location(plan, args.data)):
            out.note(note)
        # Issue 37: the rule of the dashboard's confirmation and of `release`'s refusal.
        over = check_left_out(left_out, allowed=True)
        for item in over:
            if args.allow_left_out:
                out.note(one_line(item.problem()), stderr=True)
            else:
                out.error(
                    f"{one_line(item.problem())} (`release` refuses it unless given "
                    "--allow-left-out)"
                )
        if over and not args.allow_left_out:
            return out.finish(2)
    cells = sum(t.cells for t in allocation.tables)
    summary = {"tables": len(plan.tables), "cells": cells, "statistics": len(plan.statistics)}
    return out.finish(0, summary)


def _validate_statistics_data(args: argparse.Namespace, plan: Plan, out: _Output) -> list[LeftOut]:
    """Check that the data have the statistics' columns; count the tables that need no
    discovered domain; report the data (the statistics' figures too); return what each
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
    out.data_report(report, plan)
    if discovered and not tables:
        out.note("tables over discovered columns are counted at release.", stderr=True)
    counts = counted.counts.counts if counted is not None else {}
    items = left_out_items(plan, report.report, counts)
    return [i for i in items if i.kind == "statistic" or i.name in counts]
