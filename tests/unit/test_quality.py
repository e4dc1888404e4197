"""Lint and types are part of the suite: ruff on everything, mypy (strict) on the library."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tool(name: str) -> list[str]:
    return [sys.executable, "-m", name]


def test_ruff_is_clean():
    result = subprocess.run([*tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    result = subprocess.run(
        [*tool("ruff"), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def test_mypy_is_clean():
    result = subprocess.run(tool("mypy"), cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
