"""The tests' own house rule (issue 26): code that several tests share lives in `helpers/`;
no test module imports another test module, so moving or deleting one never breaks another."""

from __future__ import annotations

import ast

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
