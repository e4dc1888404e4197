"""Run `dprelease plan` on a plan in a child process and measure its time and peak memory.

The child's address space is capped (RLIMIT_AS) and it is killed after a timeout, so a plan
that would take minutes and gigabytes fails its test quickly instead of stalling the suite.
Peak memory is the child's own maximum resident set (os.wait4), not this process's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import ROOT

ADDRESS_SPACE = 4 * 1024**3  # what the child may map: a runaway allocation fails, not the host


@dataclass(frozen=True)
class PlanRun:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float
    cpu_seconds: float  # the child's user + system time


# The child caps its own address space, runs the CLI, and at exit writes its own high-water
# resident set (VmHWM, of its image after exec). Its ru_maxrss would not do: Linux counts in it
# the image the child was forked from, i.e. this process (a pytest-xdist worker can be 500 MB).
LIMITED_CLI = (
    "import atexit, os, resource, runpy, sys; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE})); "
    "hwm = os.environ['DPRELEASE_TEST_HWM']; "
    "atexit.register(lambda: open(hwm, 'w').write(open('/proc/self/status').read())); "
    "sys.argv = ['dprelease', *sys.argv[1:]]; "
    "runpy.run_module('dprelease', run_name='__main__')"
)


def run_plan(plan: dict[str, Any] | Path, timeout: float, *args: str) -> PlanRun:
    """`python -m dprelease plan PLAN ARGS`, its wall time and the child's peak RSS."""
    with tempfile.TemporaryDirectory() as folder:
        if isinstance(plan, Path):
            path = plan
        else:
            path = Path(folder) / "plan.json"
            path.write_text(json.dumps(plan))
        out, err = Path(folder) / "out", Path(folder) / "err"
        hwm = Path(folder) / "status"
        with out.open("w") as stdout, err.open("w") as stderr:
            start = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-c", LIMITED_CLI, "plan", str(path), *args],
                stdout=stdout,
                stderr=stderr,
                cwd=ROOT,
                env={
                    "PYTHONPATH": str(ROOT),
                    "PATH": "/usr/bin:/bin",
                    "DPRELEASE_TEST_HWM": str(hwm),
                },
            )
            code, usage = _reap(child, start + timeout)
            seconds = time.perf_counter() - start
        peak_kb = usage.ru_maxrss  # killed before its exit hook: an upper bound
        if hwm.exists():
            line = next(x for x in hwm.read_text().splitlines() if x.startswith("VmHWM:"))
            peak_kb = int(line.split()[1])
        return PlanRun(
            code,
            out.read_text(),
            err.read_text(),
            seconds,
            peak_kb / 1024,
            usage.ru_utime + usage.ru_stime,
        )


def _reap(child: subprocess.Popen[bytes], deadline: float) -> tuple[int | None, Any]:
    """Wait for the child (killing it at the deadline): its exit code (None if killed) and
    its own resource usage."""
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            child.returncode = -9
            return None, usage
        time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage


@dataclass(frozen=True)
class ChildRun:
    code: int | None  # 0 done, 2 refused (DPReleaseError), 1 failed, None killed
    cpu_seconds: float  # the child's own user + system time
    growth_mb: float  # its peak resident set above what it inherited at the fork


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith(field + ":"))
    return int(line.split()[1])


def in_child(work: Callable[[], object], timeout: float = 120.0) -> ChildRun:
    """Run `work` in a forked child (the modules already imported, the caches empty of it):
    its CPU time (the kernel's count) is its own, its peak memory is its resident set's high
    water mark reset at the start (`/proc/self/clear_refs`) less what it started with, and a
    runaway is killed. Exit 2 when `work` raises DPReleaseError, 1 on anything else."""
    from dprelease.errors import DPReleaseError

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        exit_code = 0
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # the high water mark := the current resident set
        start = _status_kb("VmRSS")
        try:
            work()
        except DPReleaseError:
            exit_code = 2
        except BaseException:  # reported as the exit code
            import traceback

            traceback.print_exc()
            exit_code = 1
        os.write(write, str(_status_kb("VmHWM") - start).encode())
        os._exit(exit_code)
    os.close(write)
    deadline = time.perf_counter() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            code: int | None = os.waitstatus_to_exitcode(status)
            break
        if time.perf_counter() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            code = None
            break
        time.sleep(0.01)
    with os.fdopen(read) as pipe:
        growth = pipe.read()
    return ChildRun(code, usage.ru_utime + usage.ru_stime, int(growth or 0) / 1024)
