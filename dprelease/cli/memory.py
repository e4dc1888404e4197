"""The command line's memory allocators: freed memory kept for the next batch (issue 34).

A release allocates and frees arrays of a few megabytes per record batch (each column's cell
hashes, the counts' codes) and arrow's buffers per row group. By default glibc returns a freed
block of that size to the operating system at once (and mimalloc, arrow's allocator, soon
after), and the next batch faults the same pages back in: a charged release of 10 M rows with
a unique id took 209,000 page faults and 2.4 s of system CPU, against 44,000 and 0.2 s
without the ledger's fingerprint. Kept, they are reused: the same release then takes about
50,000 faults and 1 s. The peak memory is the same (each batch's arrays are freed before the
next batch's are made); only its return to the system waits for the process to end.

Only for the process the command line owns (`main()` with no arguments): a library caller's
process keeps its own allocator settings.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
KEEP_BYTES = 1 << 30  # freed memory kept up to this much
DIRECT_BYTES = 256 << 20  # blocks at least this large still come straight from the system


def keep_freed_memory() -> None:
    """Ask glibc (where it is the C library) and arrow's mimalloc to keep freed memory."""
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")  # read when arrow first allocates
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): its defaults stay
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, DIRECT_BYTES)
    mallopt(_M_TRIM_THRESHOLD, KEEP_BYTES)
