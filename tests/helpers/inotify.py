"""Wake the instant an entry appears in a folder (Linux inotify, through ctypes), so a test
that must catch a moment need not spin a core polling the folder: on a 2-core machine the spin
took a core from the very process it watched (issue 25: the suite's time)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import time
from collections.abc import Callable
from pathlib import Path

IN_CREATE = 0x00000100
IN_MOVED_TO = 0x00000080
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000


def _libc() -> ctypes.CDLL:
    name = ctypes.util.find_library("c")
    if name is None:
        raise OSError("no C library: inotify needs Linux")
    return ctypes.CDLL(name, use_errno=True)


def wait_for_entry(folder: Path, timeout: float, gave_up: Callable[[], bool]) -> bool:
    """Block until an entry is created in (or moved into) `folder`; True if one is there.
    False after `timeout` seconds, or as soon as `gave_up()` is true (e.g. the process that
    was to create it has ended), checked every 50 ms."""
    libc = _libc()
    fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1 failed")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(folder), IN_CREATE | IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"cannot watch {folder}")
        deadline = time.monotonic() + timeout
        while not any(folder.iterdir()):  # the watch is set: nothing can slip in between
            if time.monotonic() > deadline or gave_up():
                return False
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                os.read(fd, 4096)  # the events: which entry does not matter
        return True
    finally:
        os.close(fd)
