"""Dashboard tests' own fixture (every test's ledger file is set in tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.runtime.pages_manager import PagesManager


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
