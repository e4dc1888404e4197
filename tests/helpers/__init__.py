"""Helpers the tests share: small plans, the CLI runner, AppTest steps, bad inputs, audits."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root (where app.py, data/ and pyproject.toml are)."""
