"""What the dashboard derives from the bundled sample and its plan alone, made once per server
and shared between sessions.

Every new session opens on the sample data and the sample plan, and both are public (they ship
with the code), so their parsed table, record fingerprint, plan check and allocation, and the
plan's coverage of the sample are the same for everyone: made per session, they cost about a
fifth of a second of every first page. Values are immutable (an Arrow table, frozen
dataclasses). Nothing derived from an upload, or from a plan a user has changed, is ever kept
here: callers pass only keys of the sample itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_SHARED: dict[tuple[str, str], Any] = {}  # (what, the sample's own key) → value
_LOCK = threading.Lock()


def shared(what: str, key: str, make: Callable[[], _T]) -> _T:
    """The value `make()` for the bundled sample's `key` (its bytes' SHA-256, or the sample
    plan's text), made once per server. Sessions asking at once may both make it."""
    entry = (what, key)
    with _LOCK:
        if entry in _SHARED:
            value: _T = _SHARED[entry]
            return value
    value = make()
    with _LOCK:  # one value per kind: the sample changes only with the checkout
        for old in [e for e in _SHARED if e[0] == what and e != entry]:
            del _SHARED[old]
        _SHARED[entry] = value
    return value


def kept(what: str) -> list[Any]:
    """The values kept for one kind (for tests: that uploads are never among them)."""
    with _LOCK:
        return [value for (kind, _), value in _SHARED.items() if kind == what]
