"""`dprelease ledger show [--ledger PATH|URL] [--json]`, `ledger cap --dataset KEY --epsilon E
[--delta D] [--ledger PATH|URL]` and `ledger grant ROLE [--ledger URL]`: read and cap the budget
ledger without making a release, and let a role release to a shared PostgreSQL ledger."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from dprelease.budget_text import budget_text
from dprelease.errors import BudgetError, quote

if TYPE_CHECKING:
    from dprelease.ledger.store import Ledger


def _nonnegative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {quote(text)}") from None
    return value


_WHERE = "ledger file or postgresql://USER@HOST:PORT/DB (default: $DPRELEASE_LEDGER)"


def add_parser(commands: Any) -> None:
    ledger = commands.add_parser(
        "ledger", help="show the budget ledger, set a lifetime cap, grant a role"
    )
    actions = ledger.add_subparsers(dest="ledger_command", required=True)
    show = actions.add_parser("show", help="every data set: cap, spent, releases")
    show.add_argument("--ledger", metavar="PATH|URL", help=_WHERE)
    show.add_argument("--json", action="store_true", help="print one JSON object")
    cap = actions.add_parser("cap", help="set a data set's lifetime cap (keeps the δ cap)")
    cap.add_argument("--ledger", metavar="PATH|URL", help=_WHERE)
    cap.add_argument("--dataset", required=True, help="the data set's key or name (ledger show)")
    cap.add_argument("--epsilon", required=True, type=_nonnegative, help="lifetime ε cap")
    cap.add_argument("--delta", type=_nonnegative, help="lifetime δ cap (default: unchanged)")
    grant = actions.add_parser(
        "grant", help="let a PostgreSQL role release to this ledger (the ledger's owner only)"
    )
    grant.add_argument("role", help="an existing PostgreSQL login role")
    grant.add_argument("--ledger", metavar="URL", help=_WHERE)


def ledger_json(ledger: Ledger) -> dict[str, Any]:
    """`{"datasets": [{"key", "name", "cap": {"epsilon", "delta"}, "spent": {"epsilon",
    "delta"}, "composed": {"epsilon", "delta", "rule"}, "left": {"epsilon", "delta"},
    "releases": [{"id", "created", "epsilon", "delta", "rho", "accounting", "tables"}]}]}`
    (issue 11; `spent` holds the plain sums, `composed` the tightest valid total the ledger
    enforces, issue 34)."""
    datasets = []
    for key, name in ledger.datasets():
        balance = ledger.balance(key)
        total = balance.composed
        datasets.append(
            {
                "key": key,
                "name": name,
                "cap": {"epsilon": balance.cap_epsilon, "delta": balance.cap_delta},
                "spent": {"epsilon": balance.spent_epsilon, "delta": balance.spent_delta},
                "composed": {"epsilon": total.epsilon, "delta": total.delta, "rule": total.rule},
                "left": {"epsilon": balance.left_epsilon, "delta": balance.left_delta},
                "releases": [entry.to_dict() for entry in ledger.entries(key)],
            }
        )
    return {"datasets": datasets}


def _text(shown: dict[str, Any]) -> str:
    if not shown["datasets"]:
        return "The ledger holds no data set yet.\n"
    lines = []
    for data in shown["datasets"]:
        cap, spent = data["cap"], data["spent"]
        cap_text = (
            "no ε cap" if cap["epsilon"] is None else f"ε cap {budget_text(cap['epsilon'], 'down')}"
        )
        total = data["composed"]
        lines.append(
            f"{data['key']}  {data['name'] or '(no name)'}: spent ε = "
            f"{budget_text(spent['epsilon'])}, δ = {budget_text(spent['delta'])} over "
            f"{len(data['releases'])} release(s) (summed); composed ε = "
            f"{budget_text(total['epsilon'])}, δ = {budget_text(total['delta'])} "
            f"({total['rule']}); {cap_text}, δ cap {budget_text(cap['delta'], 'down')}"
        )
        for release in data["releases"]:
            lines.append(
                f"  {release['created']}  ε = {budget_text(release['epsilon'])}  "
                f"δ = {budget_text(release['delta'])}  {release['accounting']}  "
                f"{len(release['tables'])} table(s)  {release['id']}"
                + (
                    f"  holds invariants (exact, outside the guarantee): "
                    f"{', '.join(release['invariants'])}"
                    if release.get("invariants")
                    else ""
                )
            )
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from dprelease.ledger.files import default_ledger_path
    from dprelease.ledger.store import Ledger

    ledger = Ledger(args.ledger or default_ledger_path())
    if args.ledger_command == "show":
        shown = ledger_json(ledger)
        sys.stdout.write(json.dumps(shown, indent=2) + "\n" if args.json else _text(shown))
        return 0
    if args.ledger_command == "grant":
        ledger.grant(args.role)
        print(f"role {args.role} may now release to {ledger.location} and lower its caps")
        return 0
    key = ledger.lookup(args.dataset)
    if key is None:
        raise BudgetError(
            "No data set with that key or name in the ledger; `dprelease ledger show` lists them."
        )
    if args.delta is None:
        ledger.set_cap(key, args.epsilon)
    else:
        ledger.set_cap(key, args.epsilon, args.delta)
    balance = ledger.balance(key)
    print(
        f"lifetime cap of {key[:12]}…: ε = {budget_text(balance.cap_epsilon or 0.0, 'down')}, "
        f"δ = {budget_text(balance.cap_delta, 'down')}; spent ε = "
        f"{budget_text(balance.spent_epsilon)}, δ = {budget_text(balance.spent_delta)} "
        f"(summed), composed ε = {budget_text(balance.composed.epsilon)}"
    )
    return 0
