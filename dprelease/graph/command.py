"""`python -m dprelease graph EDGES`: k-degree risk (CONFIDENTIAL) or a DP degree histogram.

- `graph EDGES --k-degree K [--json]`: the graph's k-degree anonymity, the nodes unique by
  degree and the greedy anonymisation to K. Counts only (no node is named), for the data
  holder's terminal, under the same CONFIDENTIAL line as `risk`.
- `graph EDGES --degree-histogram --epsilon E [--node-dp --max-degree D] --out OUT [--json]`:
  the released histogram (`degree_histogram.csv` and `metadata.json`), charged to the ledger
  (`--ledger PATH`, `--no-ledger`, `--cap` as for `release`).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import Any

from dprelease.admission import file_size
from dprelease.errors import DataError, quote
from dprelease.limits import GRAPH_DEFAULT_MAX_DEGREE, MAX_DATA_MB, MAX_ROWS
from dprelease.risk.command import positive_int

CONFIDENTIAL = (
    "CONFIDENTIAL — disclosure risk of your own graph, for you only: do not publish it; "
    "it is never part of a release."
)
SIMPLE_GRAPH_NOTE = (
    "note: the edge list is read as an undirected simple graph: a repeated edge (either "
    "direction) counts once; self-loops are refused."
)


def _epsilon(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {quote(text)}") from None


def add_parser(commands: Any) -> None:
    """Register `graph` on the CLI's subparsers."""
    graph = commands.add_parser(
        "graph", help="graphs: k-degree risk (CONFIDENTIAL) or a DP degree histogram"
    )
    graph.add_argument("edges", help="edge list: a CSV whose first two columns are end nodes")
    task = graph.add_mutually_exclusive_group(required=True)
    task.add_argument(
        "--k-degree",
        type=positive_int,
        metavar="K",
        help="CONFIDENTIAL: k-degree risk, anonymise to K",
    )
    task.add_argument(
        "--degree-histogram", action="store_true", help="release a DP degree distribution"
    )
    graph.add_argument("--epsilon", type=_epsilon, help="ε of the degree histogram")
    graph.add_argument(
        "--node-dp",
        action="store_true",
        help="protect whole nodes with all their edges (needs --max-degree); default edge-DP",
    )
    graph.add_argument(
        "--max-degree",
        type=positive_int,
        metavar="D",
        help="degree bound: node-DP projects to it; edge-DP's top bin is 'D or more' "
        f"(default {GRAPH_DEFAULT_MAX_DEGREE})",
    )
    graph.add_argument("--out", help="new directory, or a path ending in .zip")
    ledger = graph.add_mutually_exclusive_group()
    ledger.add_argument(
        "--ledger",
        nargs="?",
        const="",
        metavar="PATH|URL",
        help="the budget ledger charged, a file or postgresql://… (default: $DPRELEASE_LEDGER, "
        "else "
        "~/.dprelease/ledger.sqlite)",
    )
    ledger.add_argument(
        "--no-ledger",
        action="store_true",
        help='charge no ledger (a warning; metadata.json then says "ledger": null)',
    )
    graph.add_argument("--cap", type=float, metavar="EPSILON", help="set the lifetime ε cap first")
    graph.add_argument("--dataset", help="the ledger account's name (default: none)")
    graph.add_argument(
        "--max-data-mb", type=positive_int, default=MAX_DATA_MB, help="size limit (MB)"
    )
    graph.add_argument(
        "--max-rows", type=positive_int, default=MAX_ROWS, help="most edges (rows) read"
    )
    graph.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.k_degree is not None:
        _refuse_release_options(args)
        _admit(args)
        return _run_risk(args)
    return _run_release(args)


def _admit(args: argparse.Namespace) -> None:
    """Issue 35: the one admission, from the arguments and the file's size, before a read."""
    from dprelease.graph.cost import GraphTask, admit_graph

    task = GraphTask(
        k=args.k_degree,
        max_degree=args.max_degree or GRAPH_DEFAULT_MAX_DEGREE,
        node_dp=args.node_dp,
    )
    admit_graph(task, file_size(args.edges))


def _refuse_release_options(args: argparse.Namespace) -> None:
    given = [
        name
        for name, value in (
            ("--epsilon", args.epsilon),
            ("--node-dp", args.node_dp or None),
            ("--max-degree", args.max_degree),
            ("--out", args.out),
            ("--ledger", args.ledger),
            ("--no-ledger", args.no_ledger or None),
            ("--cap", args.cap),
            ("--dataset", args.dataset),
        )
        if value is not None
    ]
    if given:
        raise DataError(
            f"{', '.join(given)} belong to --degree-histogram, not to --k-degree (a risk "
            "measure releases nothing)."
        )


def _read(args: argparse.Namespace, *, fingerprint: bool) -> Any:
    from dprelease.data.read import SizeLimits
    from dprelease.graph.edges import read_edges

    limits = SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)
    return read_edges(Path(args.edges), limits=limits, fingerprint=fingerprint)


def _run_risk(args: argparse.Namespace) -> int:
    from dprelease.graph.anonymity import measure_degree_risk

    report = measure_degree_risk(_read(args, fingerprint=False), args.k_degree)
    print(CONFIDENTIAL, file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    a = report.anonymisation
    print(f"graph: {report.nodes:,} nodes, {report.edges:,} edges", end="")
    print(f" ({report.merged:,} repeated edge(s) merged)" if report.merged else "")
    print(f"k-degree anonymity: k = {report.k} (the fewest nodes that share a degree)")
    print(
        f"nodes unique by degree: {report.unique_by_degree:,}; nodes whose degree fewer than "
        f"{a.target_k} share: {report.below_target:,}"
    )
    construction = a.construction_text()
    print(
        f"anonymise to k = {a.target_k}: raise {a.nodes_raised:,} nodes' degrees by "
        f"{a.degree_raise:,} in all = {a.edges_to_add:,} edges to add (k after: {a.k_after}); "
        f"the edges: {construction}"
    )
    return 0


def _run_release(args: argparse.Namespace) -> int:
    from dprelease.graph.release import (
        DegreeQuery,
        charged_degree_release,
        uncharged_degree_release,
    )
    from dprelease.release.export import check_output_path, write_files

    if args.epsilon is None or args.out is None:
        raise DataError("--degree-histogram needs --epsilon E and --out OUT.")
    if args.node_dp and args.max_degree is None:
        raise DataError(
            "--node-dp needs --max-degree D: node-DP projects every node to at most D edges "
            "(the sensitivity is 2D + 1); choose D from public knowledge, never from the data."
        )
    query = DegreeQuery(
        epsilon=args.epsilon,
        max_degree=args.max_degree or GRAPH_DEFAULT_MAX_DEGREE,
        node_dp=args.node_dp,
    )
    out = check_output_path(args.out)
    _admit(args)  # before the edges are read, the ledger opened or anything charged
    edges = _read(args, fingerprint=True)
    print(SIMPLE_GRAPH_NOTE, file=sys.stderr)
    if args.no_ledger:
        from dprelease.release.service import NO_LEDGER_WARNING

        print(NO_LEDGER_WARNING, file=sys.stderr)
        published = uncharged_degree_release(edges, query)
        write_files(published.files, out)
    else:
        from dprelease.release import service

        account = service.account_of(
            service.open_ledger(args.ledger), edges.fingerprint, args.dataset, edges.file_sha256
        )
        resolved = service.resolve_account(account)
        if resolved.notice:
            print(f"ledger: note: {resolved.notice}", file=sys.stderr)
        if args.cap is not None:
            service.set_cap(account, args.cap)
        published = charged_degree_release(edges, query, account, release_id=secrets.token_hex(16))
        _deliver(published.files, out, published.entry.release_id if published.entry else "")
        _print_balance(account)
    summary = {
        "out": str(out),
        "privacy_unit": query.privacy_unit,
        "epsilon": query.epsilon,
        "max_degree": query.max_degree,
        "sensitivity_l1": query.sensitivity,
        "released_nodes": published.release.released_nodes,
        "moe_95": json.loads(published.files["metadata.json"])["moe_95"],
        "ledger": None if published.entry is None else {"release_id": published.entry.release_id},
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"wrote {'a node' if query.node_dp else 'an edge'}-DP degree histogram "
            f"(ε = {query.epsilon:g}, degrees 1 … {query.max_degree}, Δ₁ = {query.sensitivity}, "
            f"±{summary['moe_95']} per bin at 95%) to {out}"
        )
    return 0


def _print_balance(account: Any) -> None:
    """The account's lifetime spend after the charge, on stderr (as `release` prints it)."""
    from dprelease.budget_text import budget_text

    ledger = account.ledger
    balance = account.balance()
    left = (
        "no lifetime cap (set one with --cap)"
        if balance.left_epsilon is None
        else f"ε = {budget_text(balance.left_epsilon, 'down')} left"
    )
    print(
        f"ledger: this data set has spent ε = {budget_text(balance.spent_epsilon, 'up')} over "
        f"{balance.releases} release(s), {left} ({ledger.path})",
        file=sys.stderr,
    )


def _deliver(files: dict[str, bytes], out: Path, release_id: str) -> None:
    """Write a charged release; a failure now leaves it charged, not delivered."""
    from dprelease.errors import ReleaseError
    from dprelease.release.export import write_files

    try:
        write_files(files, out)
    except ReleaseError as error:
        raise ReleaseError(
            f"The degree histogram was charged to the ledger (id {release_id}) but not "
            f"delivered: {error}"
        ) from None
