"""A memo for the strategy's pure functions that concurrent callers share.

`release` counts the data on one thread while it allocates the budget on another (see
`release/background.py`), and both ask for the same strategy shape: the count to learn which
unions of tables to count, the allocation to size their noise. With `functools.lru_cache`
alone both threads computed it (about a second of CPU each for the sample plan); here the later
caller waits for the first and takes its result.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

_T = TypeVar("_T")


class SharedCache(Generic[_T]):
    """`functools.lru_cache(maxsize)` over `function` whose concurrent calls with equal
    arguments compute once. Positional arguments only; calls with different arguments still
    run side by side."""

    def __init__(self, function: Callable[..., _T], maxsize: int) -> None:
        self._cached = functools.lru_cache(maxsize)(function)
        self._in_flight: dict[tuple[Hashable, ...], threading.Lock] = {}  # being computed now
        self._guard = threading.Lock()
        functools.update_wrapper(self, function)

    def __call__(self, *args: Hashable) -> _T:
        with self._guard:
            lock = self._in_flight.setdefault(args, threading.Lock())
        try:
            with lock:  # a second caller waits here, then finds the result cached
                return self._cached(*args)
        finally:
            with self._guard:
                if self._in_flight.get(args) is lock:
                    del self._in_flight[args]

    def cache_info(self) -> Any:
        return self._cached.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def shared_lru_cache(maxsize: int) -> Callable[[Callable[..., _T]], SharedCache[_T]]:
    """Decorator form of `SharedCache`."""
    return lambda function: SharedCache(function, maxsize)
