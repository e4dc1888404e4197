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


@pytest.fixture
def sample_plan() -> Path:
    """The bundled sample plan (data/census_sample.plan.yaml)."""
    return ROOT / "data" / "census_sample.plan.yaml"
