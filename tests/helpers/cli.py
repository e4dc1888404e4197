"""Running the command line from a test: in this process (the default) or as a child.

`run` calls `dprelease.cli.main` here, with the environment, working folder and standard
streams a child would have, and returns what `subprocess.run` would. A child `python -m
dprelease` spent 1.5–4 s importing the library (and, with `--engine spark`, starting a JVM of
its own beside the worker's) on every call; in process the suite's workers hold both already
(issue 25: the whole suite within 10 minutes). `run_child` is the real process, for the tests
whose subject is the process itself: what it prints on its own streams, its memory, its exit on
a signal, a fresh JVM.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"


def child_env(**extra: str) -> dict[str, str]:
    """A bare environment for a child `dprelease`: this worktree's code, a plain PATH, and the
    test's own ledger (tests/conftest.py), so that a release never charges ~/.dprelease."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    # the test's ledger; Spark's JVM; one BLAS thread; no strategy cache (tests/conftest.py)
    passed = ("DPRELEASE_LEDGER", "PYSPARK_SUBMIT_ARGS", "OPENBLAS_NUM_THREADS", "DPRELEASE_CACHE")
    for name in passed:
        if name in os.environ:
            env[name] = os.environ[name]
    return {**env, **extra}


def run_child(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m dprelease ARGS` in a clean environment (plus `env`, e.g. DPRELEASE_LEDGER)."""
    return subprocess.run(
        [sys.executable, "-m", "dprelease", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=child_env(**(env or {})),
        timeout=300,
    )


@contextlib.contextmanager
def _as_a_child(cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """This process's environment and working folder as `run_child` would set them, then back."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`dprelease ARGS` in this process, as `run_child` would run it: the same environment and
    working folder, stdout and stderr captured, the exit status of `main` (or of argparse's
    exit); an exception that escapes `main` is a traceback on stderr and status 1, as in a child.
    """
    from dprelease.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        _as_a_child(cwd, child_env(**(env or {}))),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            status = main(list(args))
        except SystemExit as leaving:  # argparse: --help (0) or a usage error (2)
            code = leaving.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
            if isinstance(code, str):
                err.write(code + "\n")
        except Exception:  # what a child would print before dying
            traceback.print_exc(file=err)
            status = 1
    return subprocess.CompletedProcess(
        ["dprelease", *args], status, stdout=out.getvalue(), stderr=err.getvalue()
    )
