"""`dprelease export PLAN (--notebook OUT.ipynb | --script OUT.py) [--data DATA]`: the release
as code that runs it through the library (contract section 5; `dprelease.release.code_export`).
Reads no data and spends nothing; running the code does."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "export", help="write a notebook or a script that releases the plan through the library"
    )
    parser.add_argument("plan", help="plan file (.yaml or .json)")
    out = parser.add_mutually_exclusive_group(required=True)
    out.add_argument("--notebook", metavar="OUT.ipynb", help="write a Jupyter notebook")
    out.add_argument("--script", metavar="OUT.py", help="write a Python script")
    parser.add_argument("--data", help="data file the code reads (overrides the plan's `data`)")


def run(args: argparse.Namespace) -> int:
    from dprelease.errors import DataError
    from dprelease.plan.parse import load_plan, plan_to_dict
    from dprelease.release.code_export import export_code

    plan = load_plan(args.plan)  # a plan that does not parse gives no code
    data = Path(args.data) if args.data else plan.data_path
    if data is None:
        raise DataError("No data file: give --data FILE or set `data:` in the plan.")
    out = export_code(plan_to_dict(plan), str(data.resolve()), args.notebook or args.script)
    print(f"wrote {out}: it releases the plan from {data} (each run spends the budget)")
    return 0
