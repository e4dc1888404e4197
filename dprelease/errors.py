"""Errors: what the user can fix, and what is a bug.

`DPReleaseError` and its subclasses carry a one-line message that says what is wrong and what
is allowed; the CLI prints it as ``error: <message>`` and exits 2, the dashboard shows it with
``st.error``. Messages name public values only (column names, plan values), never a record
value or a count from the data. `InternalError` means a bug in dprelease itself (exit 1).
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_MESSAGE = 2000  # characters; a message quoting a huge name is cut, never split


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


class InternalError(Exception):
    """A bug in dprelease: an invariant that should always hold did not."""
