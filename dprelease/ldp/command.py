"""`python -m dprelease ldp plan|simulate`: argument definitions and runners (and the
arguments of `heavy-hitters` and `itemsets`, whose runners are in `heavy_command`).

`ldp simulate` prints CONFIDENTIAL figures (true counts against the estimates) for the data
holder; nothing is written to a file.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dprelease.data.formats import FORMAT_NAMES
from dprelease.errors import quote


def add_parser(commands: Any) -> None:
    """Register `ldp` and its two subcommands on the CLI's subparsers."""
    ldp = commands.add_parser("ldp", help="local DP: plan a randomized-response survey")
    sub = ldp.add_subparsers(dest="ldp_command", required=True, parser_class=type(ldp))
    plan = sub.add_parser("plan", help="every protocol's accuracy, the best, central DP beside")
    plan.add_argument("--epsilon", type=float, required=True, help="each respondent's ε")
    plan.add_argument("--domain-size", type=int, required=True, help="number of values d ≥ 2")
    plan.add_argument("--n", type=int, required=True, help="number of respondents")
    plan.add_argument("--confidence", type=float, default=0.95, help="for the margins of error")
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    simulate = sub.add_parser(
        "simulate", help="CONFIDENTIAL: randomise a column of your data and compare with truth"
    )
    simulate.add_argument("data", help=f"data file ({FORMAT_NAMES})")
    simulate.add_argument("--column", required=True, help="the column respondents answer")
    simulate.add_argument("--protocol", required=True, help="GRR, OUE, OLH, SUE, BLH or HR")
    simulate.add_argument("--epsilon", type=float, required=True, help="each respondent's ε")
    simulate.add_argument(
        "--plan",
        help="take the column's public domain from this plan (default: the data's "
        "distinct values, acceptable only because the simulation stays with you)",
    )
    simulate.add_argument("--json", action="store_true", help="print one JSON object")
    add_heavy_parsers(sub)


def add_heavy_parsers(sub: Any) -> None:
    """Register `heavy-hitters` and `itemsets` on the `ldp` subparsers."""
    heavy = sub.add_parser(
        "heavy-hitters", help="the most frequent values of a column, each row randomised (LDP)"
    )
    _common(heavy, "the column respondents answer (any text)")
    items = sub.add_parser(
        "itemsets", help="frequent items and pairs of set-valued answers (items separated by ';')"
    )
    _common(items, "the column of answers, items separated by ';' (e.g. 'English; Spanish')")


def _common(parser: argparse.ArgumentParser, column_help: str) -> None:
    parser.add_argument("data", help=f"data file ({FORMAT_NAMES})")
    parser.add_argument("--column", required=True, help=column_help)
    parser.add_argument("--epsilon", type=float, required=True, help="each respondent's ε")
    parser.add_argument("--top", type=int, default=10, help="how many values (default 10)")
    parser.add_argument(
        "--max-length",
        type=int,
        default=16,
        help="bytes of a value the search reads; longer values are cut (default 16)",
    )
    parser.add_argument("--confidence", type=float, default=0.95, help="for the margins")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.ldp_command == "plan":
        return _plan(args)
    if args.ldp_command in ("heavy-hitters", "itemsets"):
        from dprelease.ldp.heavy_command import RUNNERS

        return RUNNERS[args.ldp_command](args)
    return _simulate(args)


def _plan(args: argparse.Namespace) -> int:
    from dprelease.ldp.planner import plan_ldp

    plan = plan_ldp(args.epsilon, args.domain_size, args.n, args.confidence)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
        return 0
    print(
        f"epsilon={plan.epsilon:g}  d={plan.domain_size}  n={plan.n:,}  "
        f"confidence={plan.confidence:g}  (variance and moe of a count near 0)"
    )
    print(f"{'protocol':<9}{'variance':>14}{'moe':>12}")
    for p in plan.protocols:
        extra = f"   g={p.g}" if p.g is not None else ""
        mark = "   <- best" if p.name == plan.best else ""
        print(f"{p.name:<9}{p.variance:>14.6g}{p.moe:>12.5g}{extra}{mark}")
    c = plan.central
    print(f"{'central':<9}{c.variance:>14.6g}{c.moe:>12.5g}   {c.mechanism}, sensitivity 1")
    print(plan.answer())
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dprelease.admission import file_size
    from dprelease.data.read import read_data
    from dprelease.ldp.base import LdpError
    from dprelease.ldp.cost import LdpTask, admit_ldp
    from dprelease.ldp.registry import protocol
    from dprelease.ldp.simulation import encode_column, simulate

    protocol(args.protocol)  # an unknown protocol fails before the data are read
    column = None
    if args.plan:
        from dprelease.plan.parse import load_plan

        schema = load_plan(args.plan).schema
        if args.column not in schema.names:
            raise LdpError(f"The plan does not define column {quote(args.column)}.")
        column = schema[args.column]
    if not Path(args.data).is_file():
        raise LdpError(f"Data file '{args.data}' does not exist.")
    task = LdpTask("simulate", domain_size=None if column is None else column.size)
    admit_ldp(task, file_size(args.data))  # issue 35: before the data are read
    table = read_data(args.data)
    result = simulate(encode_column(table, args.column, column), args.protocol, args.epsilon)
    errors = result.errors()
    if args.json:
        print(
            json.dumps(
                {
                    "confidential": True,
                    "protocol": result.protocol,
                    "epsilon": result.epsilon,
                    "n": result.n,
                    "rows_left_out": result.rows_left_out,
                    "moe": result.moe,
                    "cells": [
                        {
                            "value": label,
                            "true": int(t),
                            "estimate": float(e),
                            "projected": float(p),
                        }
                        for label, t, e, p in zip(
                            result.labels,
                            result.true_counts,
                            result.estimated,
                            result.projected,
                            strict=True,
                        )
                    ],
                    "errors": {k: vars(v) for k, v in errors.items()},
                },
                indent=2,
            )
        )
        return 0
    print("CONFIDENTIAL simulation (true counts; for you only, never release this)")
    print(
        f"{result.protocol} at epsilon={result.epsilon:g}: n={result.n:,} respondents, "
        f"{result.rows_left_out:,} rows without a value in the domain left out; "
        f"moe per count ±{result.moe:.4g}"
    )
    width = max(len(label) for label in result.labels)
    print(f"{'value':<{width}}  {'true':>10}  {'estimate':>10}  {'projected':>10}")
    for label, t, e, p in zip(
        result.labels, result.true_counts, result.estimated, result.projected, strict=True
    ):
        print(f"{label:<{width}}  {t:>10}  {e:>10.1f}  {p:>10.1f}")
    for name, m in errors.items():
        print(
            f"{name}: MAE {m.mae:.4g}, RMSE {m.rmse:.4g}, largest {m.max_abs:.4g}, "
            f"beyond moe {m.share_beyond_moe:.1%}"
        )
    return 0
