"""`dprelease sample --rows N --out FILE.csv [--seed S] [--plan PLAN]`: the synthetic
census-like sample data, and a plan that matches it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> None:
    sample = commands.add_parser("sample", help="write the synthetic census-like sample data")
    sample.add_argument("--rows", type=int, required=True, help="number of rows")
    sample.add_argument("--out", required=True, help="CSV file to write")
    sample.add_argument("--seed", type=int, help="seed for a reproducible sample")
    sample.add_argument("--plan", help="also write a matching plan (.yaml or .json) here")


def _new_file(path: str, suffixes: tuple[str, ...], what: str) -> Path:
    """A file to create: right extension, folder exists, nothing there yet (never overwrite)."""
    from dprelease.errors import ReleaseError
    from dprelease.release.export import check_output_path

    if Path(path).suffix.lower() not in suffixes:
        raise ReleaseError(f"The {what} file '{path}' must end in {' or '.join(suffixes)}.")
    return check_output_path(path)


def run(args: argparse.Namespace) -> int:
    from dprelease.sample.cost import SampleTask, admit_sample
    from dprelease.sample.generator import write_sample, write_sample_plan

    out = _new_file(args.out, (".csv",), "sample")
    if args.plan:
        _new_file(args.plan, (".yaml", ".yml", ".json"), "plan")
    admit_sample(SampleTask(args.rows, args.seed))  # issue 35: before anything is written
    write_sample(out, args.rows, args.seed)
    print(f"wrote {args.rows} synthetic rows to {out}")
    if args.plan:
        write_sample_plan(Path(args.plan), data_file=os.path.relpath(out, Path(args.plan).parent))
        print(f"wrote a matching plan to {args.plan}")
    return 0
