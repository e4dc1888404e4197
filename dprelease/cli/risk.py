"""`dprelease risk` and `dprelease reconstruct` (`dprelease.risk.command`) as one entry of the
command list: two subcommands, one `run` that picks by name."""

from __future__ import annotations

import argparse
from typing import Any

from dprelease.risk import command


def add_parser(commands: Any) -> None:
    command.add_parsers(commands)


def run(args: argparse.Namespace) -> int:
    return command.run_risk(args) if args.command == "risk" else command.run_reconstruct(args)
