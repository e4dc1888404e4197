"""Errors: what the user can fix, and what is a bug.

`DPReleaseError` and its subclasses carry a one-line message that says what is wrong and what
is allowed; the CLI prints it as ``error: <message>`` and exits 2, the dashboard shows it with
``st.error``. Messages name public values only (column names, plan values), never a record
value or a count from the data. `InternalError` means a bug in dprelease itself (exit 1).
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable

MAX_MESSAGE = 2000  # characters; a message quoting a huge name is cut, never split
MAX_QUOTE = 80  # characters of one quoted value (a name, a plan value) in a message


class _BoundedRepr(reprlib.Repr):
    """`repr` that cuts before it builds: text is sliced, containers stop after a few items.

    A plan value can be a list of a million items or a string of megabytes; building its full
    repr only to cut it afterwards costs time and memory the attacker chooses.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = limit
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = 6

    def repr_int(self, x: int, level: int) -> str:
        # repr of a huge int is quadratic (and refused beyond 4,300 digits): size it first.
        if x.bit_length() > self.maxlong * 3:  # 3 bits per decimal digit, a safe underestimate
            return f"<a whole number of about {int(x.bit_length() * 0.30103):,} digits>"
        return super().repr_int(x, level)


def quote(value: object, limit: int = MAX_QUOTE) -> str:
    """A user-supplied value as an error message quotes it: `repr`, bounded *before* it is built.

    Short values read exactly as `repr(value)`; a long text keeps its start and end around
    "...", a long list its first items. Every message that quotes a name or a value from a
    plan, a data file or an input box goes through here.
    """
    if isinstance(value, str) and len(value) <= limit:
        return repr(value)
    return _BoundedRepr(limit).repr(value)


def one_line(message: str) -> str:
    """A message as one printable line: line breaks and control characters escaped, long ones cut.

    Names from files and plans can hold any character, and the CLI promises one line.
    """
    if not message.isprintable():
        message = "".join(
            c if c.isprintable() else c.encode("unicode_escape").decode() for c in message
        )
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "…"


class DPReleaseError(Exception):
    """A problem the user can fix (bad plan, bad data, budget too small)."""

    def __init__(self, message: str, problems: Iterable[str] | None = None) -> None:
        self.problems: list[str] = list(problems) if problems is not None else [message]
        super().__init__(message)


class PlanError(DPReleaseError):
    """The release plan is malformed or inconsistent."""

    @classmethod
    def from_problems(cls, problems: list[str]) -> PlanError:
        """One error for many problems: the message is the first, with a count of the rest."""
        first = problems[0]
        if len(problems) > 1:
            more = len(problems) - 1
            first += f" (and {more} more problem{'s' if more > 1 else ''}: run `validate`)"
        return cls(first, problems)


class DataError(DPReleaseError):
    """The data file cannot be read or does not fit the plan."""


class BudgetError(DPReleaseError):
    """The privacy budget is invalid or too small for what the plan asks."""


class ReleaseError(DPReleaseError):
    """The release cannot be written (e.g. the output already exists)."""


class LedgerError(DPReleaseError):
    """The budget ledger cannot be used: not a ledger, damaged, unwritable or busy."""


class ResourceError(DPReleaseError):
    """The work or memory a command would take is over a limit (`dprelease.admission`)."""


class InternalError(Exception):
    """A bug in dprelease: an invariant that should always hold did not."""
