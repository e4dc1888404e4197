"""`python -m dprelease ldp heavy-hitters|itemsets`: the runners (the arguments are defined
in `command`, so that building the CLI's parser loads nothing more).

Both simulate a local-DP collection on a column of your data: every row randomises its own
value as its respondent's device would, and only the aggregator's estimates and margins are
printed, never a true count. Like `ldp simulate`, they do not charge the ledger (the ledger
accounts for central-DP releases under add/remove neighbours; a local-DP collection's guarantee
is ε per respondent's answer, and the collector sees how many reports arrive), so, like it,
their output says CONFIDENTIAL: it is for the data holder, not for publication (issue 34:
rerunning and averaging shrinks their noise). No figure gives the row count back: margins are
computed at the row count rounded up to a power of two (`ldp.base.margin_rows`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dprelease.errors import quote

CONFIDENTIAL = (
    "CONFIDENTIAL simulation on your records (for you only, never release this: it is not "
    "charged to the ledger, and reruns averaged would shrink its noise)"
)


def _column(args: argparse.Namespace) -> tuple[list[str | None], Any]:
    from pathlib import Path

    from dprelease.admission import file_size
    from dprelease.data.columns import dictionary_parts
    from dprelease.data.read import read_data
    from dprelease.ldp.base import LdpError, check_epsilon
    from dprelease.ldp.cost import LdpTask, admit_ldp
    from dprelease.ldp.heavy_hitters import check_top
    from dprelease.ldp.planner import normal_quantile
    from dprelease.ldp.prefix import check_max_length

    # Arguments fail before the data are read.
    check_epsilon(args.epsilon)
    check_top(args.top)
    check_max_length(args.max_length)
    normal_quantile(args.confidence)
    if not Path(args.data).is_file():
        raise LdpError(f"Data file {quote(args.data)} does not exist.")
    admit_ldp(LdpTask(args.ldp_command, args.max_length), file_size(args.data))  # issue 35
    table = read_data(args.data)
    if args.column not in table.column_names:
        raise LdpError(
            f"The data has no column {quote(args.column)} ({table.num_columns} columns; "
            "check the name's spelling and case)."
        )
    texts, indices = dictionary_parts(table.column(args.column), args.column)
    return list(texts), indices


def run_heavy_hitters(args: argparse.Namespace) -> int:
    from dprelease.ldp.heavy_hitters import heavy_hitters, text_codes

    texts, indices = _column(args)
    values, codes = text_codes(texts, indices, args.column)
    result = heavy_hitters(values, codes, args.epsilon, args.top, args.max_length, args.confidence)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print(CONFIDENTIAL)
    print(
        f"Local-DP heavy hitters of {quote(args.column)} (simulation: every row randomised "
        "as its respondent would; estimates and margins only)"
    )
    print(
        f"{result.protocol}, epsilon={result.epsilon:g}, values cut to {result.max_length} "
        f"bytes, {result.confidence:.0%} margins"
    )
    _table([(h.value, h.estimate, h.moe) for h in result.top])
    print(f"{len(result.top)} value(s) above the noise threshold {result.threshold:,.0f}.")
    return 0


def run_itemsets(args: argparse.Namespace) -> int:
    from dprelease.ldp.itemsets import SEPARATOR, frequent_itemsets, parse_answers

    texts, indices = _column(args)
    answers = parse_answers(texts, indices, args.column, args.max_length)
    result = frequent_itemsets(answers, args.epsilon, args.top, args.max_length, args.confidence)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print(CONFIDENTIAL)
    print(
        f"Local-DP frequent items and pairs of {quote(args.column)} (items separated by "
        f"'{SEPARATOR}'; simulation: estimates and margins only)"
    )
    print(
        f"epsilon={result.epsilon:g}, pad length {result.pad_length}, "
        f"{result.confidence:.0%} margins"
    )
    print("Items:")
    _table([(h.value, h.estimate, h.moe) for h in result.items])
    print("Pairs:")
    _table([(" + ".join(h.items), h.estimate, h.moe) for h in result.pairs])
    return 0


def _printable(value: str) -> str:
    """A found value as one line of text: control characters escaped (\\n, \\x07)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in value)


def _table(rows: list[tuple[str, float, float]]) -> None:
    if not rows:
        print("  (none above the noise)")
        return
    rows = [(_printable(value), estimate, moe) for value, estimate, moe in rows]
    width = max(12, *(len(v) for v, _, _ in rows))
    print(f"  {'value':<{width}}  {'estimate':>12}  {'moe':>10}")
    for value, estimate, moe in rows:
        print(f"  {value:<{width}}  {estimate:>12,.0f}  {'±' + format(moe, ',.0f'):>10}")


RUNNERS = {"heavy-hitters": run_heavy_hitters, "itemsets": run_itemsets}
