"""Helpers shared by the tests (moved from test_cli.py)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"


def run(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m dprelease ARGS` in a clean environment (plus `env`, e.g. DPRELEASE_LEDGER)."""
    return subprocess.run(
        [sys.executable, "-m", "dprelease", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **(env or {})},
        timeout=300,
    )
