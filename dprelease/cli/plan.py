"""`dprelease plan PLAN [--json]`: the allocation and the expected accuracy, no data read."""

from __future__ import annotations

import argparse
import json
from typing import Any

from dprelease.cli.options import add_cells_option, load_plan
from dprelease.cli.text import summary_text


def add_parser(commands: Any) -> None:
    plan = commands.add_parser("plan", help="print the allocation and expected accuracy")
    plan.add_argument("plan", help="plan file (.yaml or .json)")
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    add_cells_option(plan)


def run(args: argparse.Namespace) -> int:
    from dprelease.release.admitted import admit_plan
    from dprelease.stats.allocation import allocate

    plan = load_plan(args)
    admit_plan(plan)  # issue 35: refused in one line before the allocation runs
    allocation = allocate(plan)
    if args.json:
        print(json.dumps(allocation.to_dict(), indent=2))
    else:
        print(summary_text(allocation), end="")
    return 0
