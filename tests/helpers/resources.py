"""Run `dprelease plan` on a plan in a child process and measure its time and peak memory.

The child's address space is capped (RLIMIT_AS) and it is killed after a timeout, so a plan
that would take minutes and gigabytes fails its test quickly instead of stalling the suite.
Peak memory is the child's own maximum resident set (os.wait4), not this process's.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
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


def _limit() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_plan(plan: dict[str, Any] | Path, timeout: float, *args: str) -> PlanRun:
    """`python -m dprelease plan PLAN ARGS`, its wall time and the child's peak RSS."""
    with tempfile.TemporaryDirectory() as folder:
        if isinstance(plan, Path):
            path = plan
        else:
            path = Path(folder) / "plan.json"
            path.write_text(json.dumps(plan))
        out, err = Path(folder) / "out", Path(folder) / "err"
        with out.open("w") as stdout, err.open("w") as stderr:
            start = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-m", "dprelease", "plan", str(path), *args],
                stdout=stdout,
                stderr=stderr,
                cwd=ROOT,
                env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                preexec_fn=_limit,
            )
            code, usage = _reap(child, start + timeout)
            seconds = time.perf_counter() - start
        return PlanRun(code, out.read_text(), err.read_text(), seconds, usage.ru_maxrss / 1024)


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
