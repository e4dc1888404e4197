"""The strategy's shape searches, kept on disk between processes (issue 34).

`strategy: auto` searches for the budget's shape (about a second of CPU for the benchmark
plan, the same answer every time): a command-line `release` paid it on every run. The answer
is a pure function of public inputs only (the domain built from the plan's schema, the tables
as marginals, their weights, the strategy kind; never data, never ε), so it is kept in a file
named by a SHA-256 of those inputs and of this package's own source (an edited strategy never
reads an old answer). A file that cannot be read or does not look like an answer is ignored
and computed again; a privacy promise never rests on it (the accountant rounds whatever shape
it is given into shares that fit the budget exactly).

The folder is `$DPRELEASE_CACHE/strategy` (`off` keeps nothing), else
`$XDG_CACHE_HOME/dprelease/strategy` or `~/.cache/dprelease/strategy`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from dprelease.strategy.domain import Domain

_T = TypeVar("_T")
OFF = "off"


def cache_folder() -> Path | None:
    """Where answers are kept, or None when `$DPRELEASE_CACHE` is `off` (or empty)."""
    configured = os.environ.get("DPRELEASE_CACHE")
    if configured is not None:
        return None if configured.strip().lower() in ("", OFF) else Path(configured) / "strategy"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dprelease" / "strategy"


@functools.cache
def _code_digest() -> str:
    """This package's source and numpy's version: a change to either is another key."""
    digest = hashlib.sha256(np.__version__.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _tuples(value: Any) -> Any:
    """JSON's lists back into the tuples the searches return."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _store(path: Path, value: object) -> None:
    """Written whole (a temporary file renamed), so a reader never sees half an answer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(value, out)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def disk_memo(
    name: str, valid: Callable[[tuple[Any, ...], Any], bool]
) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """Keep `function(*args)` on disk, keyed by `name`, the code and `repr(args)` (public
    inputs with a deterministic repr: dataclasses, tuples, numbers, text). `valid(args,
    value)` says whether a value read back can be an answer for those arguments."""

    def decorate(function: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(function)
        def memo(*args: Any) -> _T:
            folder = cache_folder()
            if folder is None:
                return function(*args)
            text = repr((name, _code_digest(), args)).encode()
            path = folder / f"{hashlib.sha256(text).hexdigest()}.json"
            try:
                kept = _tuples(json.loads(path.read_text()))
                if valid(args, kept):
                    return kept  # type: ignore[no-any-return]
            except (OSError, ValueError, TypeError, IndexError):
                pass  # absent or unreadable: computed again
            value = function(*args)
            # a folder that cannot be written only costs the search next time
            with contextlib.suppress(OSError, TypeError, ValueError):
                _store(path, value)
            return value

        return memo

    return decorate


def shares_ok(shares: Any) -> bool:
    """A tuple of finite, non-negative floats with a positive largest."""
    return (
        isinstance(shares, tuple)
        and bool(shares)
        and all(isinstance(x, float) and math.isfinite(x) and x >= 0 for x in shares)
        and max(shares) > 0
    )


def candidate_shares_ok(domain: Domain, found: Any) -> bool:
    """(candidates, shares): marginals of the domain, and a share for each."""
    return (
        isinstance(found, tuple)
        and len(found) == 2
        and isinstance(found[0], tuple)
        and all(_marginal_ok(domain, m) for m in found[0])
        and shares_ok(found[1])
        and len(found[0]) == len(found[1])
    )


def _marginal_ok(domain: Domain, marginal: Any) -> bool:
    return (
        isinstance(marginal, tuple)
        and len(marginal) == len(domain.attributes)
        and all(
            isinstance(level, int) and 0 <= level <= a.total_level
            for a, level in zip(domain.attributes, marginal, strict=True)
        )
    )
