"""`dprelease release PLAN --out OUT [--data DATA] [--ledger [PATH] | --no-ledger] [--cap E]
[--allow-left-out]`: the release through the one release service
(`dprelease.release.service.release_plan`)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from dprelease.cli.options import (
    add_cells_option,
    add_data_argument,
    add_data_options,
    file_data,
    load_plan,
)
from dprelease.cli.text import print_balance, print_data_report, summary_text


def add_parser(commands: Any) -> None:
    release = commands.add_parser("release", help="draw the noise once and write the release")
    release.add_argument("plan", help="plan file (.yaml or .json)")
    add_data_argument(release)
    release.add_argument("--out", required=True, help="new directory, or a path ending in .zip")
    release.add_argument("--json", action="store_true", help="print the summary as JSON")
    ledger = release.add_mutually_exclusive_group()
    ledger.add_argument(
        "--ledger",
        nargs="?",
        const="",
        metavar="PATH|URL",
        help="the budget ledger the release is charged to: a file, or postgresql://USER@HOST"
        ":PORT/DB for a team's shared ledger (default, and with no PATH: "
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
    release.add_argument(
        "--allow-left-out",
        action="store_true",
        help="release even if a table or statistic leaves out more than 1%% of the rows "
        "(values outside the domain, or missing): the dashboard's confirmation",
    )
    release.add_argument(
        "--allow-invariants",
        action="store_true",
        help="the ledger's owner allows the plan's invariant tables (exact, outside the cap) "
        "on an account with a lifetime cap; refused for anyone else",
    )
    add_data_options(release)
    add_cells_option(release)


def run(args: argparse.Namespace) -> int:
    from dprelease.admission import file_size
    from dprelease.release.admitted import admit_release
    from dprelease.release.background import Background, small_local_file
    from dprelease.release.export import check_output_path
    from dprelease.release.noise import warm_up
    from dprelease.release.service import NO_LEDGER_WARNING, ReleaseRequest, release_plan
    from dprelease.stats.allocation import allocate

    plan = load_plan(args)
    # The allocation (a second under accounting and strategy auto) runs while a small file is
    # read; before anything larger is read, so that a budget problem is reported first.
    location = args.data or (plan.data if plan.data and "://" in plan.data else plan.data_path)
    # Issue 35: admitted before any work starts (the allocation below starts at once on
    # another thread); the service admits again, from the same cached estimates, for the
    # callers that come to it directly.
    admit_release(plan, file_size(location))
    allocating = Background(lambda: allocate(plan), overlap=small_local_file(location))
    try:
        out = check_output_path(args.out)  # before the data are read or any noise is drawn
        request = ReleaseRequest(
            plan,
            file_data(args, plan),
            charge=not args.no_ledger,  # issue 24: the ledger is charged unless told otherwise
            ledger=args.ledger,
            cap=args.cap,
            allocation=allocating.result,
            label=Path(args.plan).name,
            out=out,
            allow_left_out=args.allow_left_out,
            allow_invariants=args.allow_invariants,
        )
        if not request.charge:
            sys.stderr.write(NO_LEDGER_WARNING + "\n")
        # OpenDP takes a while to import; let it load on the other core while the data are read.
        threading.Thread(target=warm_up, daemon=True).start()
        outcome = release_plan(request)
    except Exception:
        allocating.result()  # a budget problem is the error to report, as it was read first
        raise
    allocation, release = outcome.allocation, outcome.release
    if outcome.notice:
        sys.stderr.write(f"ledger: note: {outcome.notice}\n")
    if outcome.report is not None:
        print_data_report(outcome.report, plan)  # after success, so that an error stays one line
    for item in outcome.left_out:  # confirmed with --allow-left-out: still said, on stderr
        sys.stderr.write(f"data (for you only, never in the release): note: {item.problem()}\n")
    if outcome.account is not None:
        print_balance(outcome.account, allocation.total.epsilon)
    if args.json:
        print(json.dumps(allocation.to_dict(), indent=2))
    else:
        print(summary_text(allocation), end="")
        print(f"release written to {out}")
        print(f"post-processing: {', '.join(release.steps_applied) or 'none'}")
        for step in release.steps_skipped:
            print(
                f"note: post-processing step '{step}' could not be held with consistency; skipped."
            )
    return 0
