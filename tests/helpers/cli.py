"""Helpers shared by the tests (moved from test_cli.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"


def child_env(**extra: str) -> dict[str, str]:
    """A bare environment for a child `dprelease`: this worktree's code, a plain PATH, and the
    test's own ledger (tests/conftest.py), so that a release never charges ~/.dprelease."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    if "DPRELEASE_LEDGER" in os.environ:
        env["DPRELEASE_LEDGER"] = os.environ["DPRELEASE_LEDGER"]
    return {**env, **extra}


def run(
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
