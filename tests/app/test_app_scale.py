"""The dashboard at scale: the same decoded-size limits as the CLI, and the way to bigger data."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from dprelease.limits import MAX_ROWS
from helpers import ROOT
from helpers.bombs import constant_parquet


def open_data_page() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.run()
    assert not app.exception
    return app


def test_the_data_page_says_how_to_count_larger_data_and_reads_no_typed_path() -> None:
    app = open_data_page()
    captions = " ".join(c.value for c in app.caption)
    assert "--engine duckdb" in captions and "--engine spark" in captions
    assert "never reads a path" in captions
    assert not [t for t in app.text_input if "path" in t.label.lower()]


def test_an_uploaded_row_bomb_is_refused_from_its_metadata(tmp_path: Path) -> None:
    bomb = constant_parquet(tmp_path / "bomb.parquet", MAX_ROWS + 1).read_bytes()
    app = open_data_page()
    before = app.session_state["workspace"].upload
    app.file_uploader(key="data_upload").upload("bomb.parquet", bomb, "application/octet-stream")
    app.run()
    assert not app.exception
    assert app.error and "row limit" in app.error[0].value
    assert app.session_state["workspace"].upload == before
