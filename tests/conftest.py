"""Shared test set-up.

Tests are sorted by kind: unit/ (against hand-computed or independent values), property/
(hypothesis), statistical/ (samplers and privacy audits: fit and power), integration/ (the
cross-feature matrix: every command on one plan with every feature), app/ (Streamlit
AppTest), browser/ (the real app in Chromium). Code that several tests share lives in the
`helpers` package next to this file (plans, the CLI runner, AppTest steps, bad inputs, audits):
test modules import helpers, never each other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT


@pytest.fixture(autouse=True)
def ledger_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ledger file ($DPRELEASE_LEDGER): `release` charges a ledger
    unless told `--no-ledger` (issue 24), and no test may write to ~/.dprelease or see another
    test's charges. Child processes get it through `helpers.cli.child_env`."""
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPRELEASE_LEDGER", str(path))
    return path


@pytest.fixture
def sample_plan() -> Path:
    """The bundled sample plan (data/census_sample.plan.yaml)."""
    return ROOT / "data" / "census_sample.plan.yaml"
