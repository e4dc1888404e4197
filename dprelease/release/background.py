"""Work that `release` runs on another thread while the data are read.

The count of a small file and the budget's allocation (under `accounting: auto` and
`strategy: auto`, choosing the measurements takes about a second) need nothing from each other,
so they overlap. Nothing private crosses threads: the allocation reads the plan only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

_T = TypeVar("_T")

# The largest data file whose read a budget error may wait for: the Arrow engine reads such a
# CSV whole in about 2 s here. Larger data, folders and URIs are read only after the budget
# is known, so that a budget problem is still reported before a long count.
OVERLAP_MAX_BYTES = 256 << 20


class Background(Generic[_T]):
    """`work()` on a daemon thread, or at once when `overlap` is False.

    `result()` waits for it and returns its value, or raises the exception it raised (every
    call raises it again, so a caller may ask before reporting an error of its own).
    """

    def __init__(self, work: Callable[[], _T], *, overlap: bool = True) -> None:
        self._work = work
        self._value: list[_T] = []  # one item once work() has returned
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if overlap:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        else:
            self._run()

    def _run(self) -> None:
        try:
            self._value.append(self._work())
        except BaseException as error:  # handed to the caller's thread by result()
            self._error = error

    def result(self) -> _T:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value[0]


def small_local_file(location: str | Path | None) -> bool:
    """A local file of at most OVERLAP_MAX_BYTES (False for a folder, a URI or no file)."""
    if location is None or "://" in str(location):
        return False
    try:
        path = Path(location)
        return path.is_file() and path.stat().st_size <= OVERLAP_MAX_BYTES
    except OSError:
        return False
