"""The tests' own house rule (issue 26): code that several tests share lives in `helpers/`;
no test module imports another test module, so moving or deleting one never breaks another."""

from __future__ import annotations

import ast
import re

from helpers import ROOT

TESTS = ROOT / "tests"


def test_no_test_module_imports_another_test_module() -> None:
    test_modules = {path.stem for path in TESTS.rglob("test_*.py")}
    offenders = []
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = name.split(".")
                if (parts[0] == "tests" and parts[1:2] != ["helpers"]) or parts[-1] in test_modules:
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_every_test_file_the_docs_name_exists() -> None:
    """Docs and docstrings cite tests by path (`tests/unit/plan/test_labels.py`); a moved or
    renamed test must take its citations along."""
    cited = re.compile(r"tests/[\w/]+\.py")
    sources = [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "dprelease").rglob("*.py"),
    ]
    missing = sorted(
        f"{source.relative_to(ROOT)}: {path}"
        for source in sources
        for path in cited.findall(source.read_text("utf-8"))
        if not (ROOT / path).exists()
    )
    assert missing == []
