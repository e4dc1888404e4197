"""Every dashboard test gets its own ledger file: no test sees another's charges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.runtime.pages_manager import PagesManager


@pytest.fixture(autouse=True)
def ledger_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPRELEASE_LEDGER", str(path))
    return path


@pytest.fixture
def app_py_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run app.py on every AppTest run, as the server does (the sidebar is drawn every time).

    AppTest resets `PagesManager.uses_pages_directory` before each run and, since the repository
    has a `pages/` folder, re-runs only the page script after the first run (Streamlit's
    multipage v1 path); the server keeps the flag False once app.py has called st.navigation,
    so app.py (sidebar, session) runs every time there."""
    original = PagesManager.__init__

    def init(self: PagesManager, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
