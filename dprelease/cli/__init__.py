"""The command line (`python -m dprelease`, contract v1 section 2): one module per subcommand.

Each subcommand module has `add_parser(subparsers)` (its arguments) and `run(args) -> int` (parse
args → call the library → print); `SUBCOMMANDS` lists them, one line each, in the order of
`--help`. A module may add more than one subcommand (`cli/risk.py`: risk and reconstruct); the
subcommands it adds run through its `run`.

Exit status 0 on success; 2 for anything the user can fix, with one line ``error: ...`` on
stderr and no traceback; 1 for an internal error. Each command imports only what it needs,
so that start-up stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from dprelease.cli import codebook, plan, release, risk, sample, validate
from dprelease.cli.memory import keep_freed_memory
from dprelease.errors import DPReleaseError, one_line
from dprelease.graph import command as graph_command
from dprelease.ldp import command as ldp_command
from dprelease.ledger import command as ledger_command
from dprelease.release import code_command

SUBCOMMANDS: list[Any] = [
    plan,
    release,
    validate,
    codebook,  # the labels a Stata, SPSS or SAS file declares (issue 36)
    sample,
    ledger_command,
    ldp_command,
    code_command,  # export
    risk,  # risk, reconstruct
    graph_command,
]
"""Each area's command module (`add_parser(subparsers)`, `run(args) -> int`), in --help order."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one `error:` line and exit 2, like every user error."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {one_line(message)} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


def _parser() -> _Parser:
    """The parser of every subcommand; each one's `run` as the parsed arguments' `run`."""
    parser = _Parser(
        prog="dprelease",
        description="Plan a privacy budget and publish differentially private tables.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in SUBCOMMANDS:
        before = set(commands.choices)
        module.add_parser(commands)
        for name in set(commands.choices) - before:
            commands.choices[name].set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status (`argv` None: this process is the command's)."""
    if argv is None:
        keep_freed_memory()
    args = _parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return int(run(args))
    except DPReleaseError as error:
        sys.stderr.write(f"error: {one_line(str(error))}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted; nothing was released.\n")
        return 130
    except OSError as error:  # e.g. disk full, read-only folder: the user can fix it
        where = f" ({error.filename})" if error.filename else ""
        sys.stderr.write(
            f"error: {one_line(f'{error.strerror or type(error).__name__}{where}')}.\n"
        )
        return 2
    except MemoryError:
        sys.stderr.write("error: not enough memory for this data set and plan.\n")
        return 2
    except Exception as error:  # a bug: say so in one line; the traceback on request
        if os.environ.get("DPRELEASE_DEBUG"):
            raise
        # The message of an arbitrary exception may quote data: print only where it happened.
        frame = traceback.extract_tb(error.__traceback__)[-1]
        sys.stderr.write(
            f"internal error: {type(error).__name__} in {Path(frame.filename).name}:"
            f"{frame.lineno} (a bug in dprelease; set DPRELEASE_DEBUG=1 for details)\n"
        )
        return 1
