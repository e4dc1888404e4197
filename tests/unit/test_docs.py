"""The documentation: the README stays short and its links resolve, its command-line examples
run as written after the two commands, and the MkDocs site builds strictly (a broken link, a
missing anchor or a moved module fails here)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

README = ROOT / "README.md"


def _readme_links() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [link for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) if "://" not in link]


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_readme_links_point_at_files_in_the_repository() -> None:
    links = _readme_links()
    assert links, "the README links to the docs"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert missing == []


def _cli_examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## A first release from the command line", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.strip().splitlines()]


def test_readme_cli_examples_run_as_written(tmp_path: Path) -> None:
    """Each example line runs in a checkout laid out as after the two commands: `.venv` (this
    interpreter's environment), `data/` and `dprelease/` side by side, the ledger in tmp."""
    commands = _cli_examples()
    assert len(commands) >= 4
    venv = Path(sys.prefix)
    if not (venv / "bin" / "python").exists():
        pytest.skip("the tests run outside a virtualenv")
    (tmp_path / ".venv").symlink_to(venv)
    for name in ("data", "dprelease"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "DPRELEASE_LEDGER": str(tmp_path / "ledger.sqlite"), "PYTHONPATH": ""}
    for command in commands:
        assert command.startswith(".venv/bin/python -m dprelease ")
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"


@pytest.mark.slow
def test_docs_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (requirements-dev.txt installs it)")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
