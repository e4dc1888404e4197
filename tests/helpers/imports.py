"""The library's own imports, read from its source (the layer guard and the registry tests).

Every import is read: module-level, `TYPE_CHECKING` and function-level alike, so a lazy
import cannot hide one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "dprelease"


def modules() -> dict[str, Path]:
    """Every module of the library by its name below `dprelease.` (a package by its own)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            found[".".join(parts)] = path
    return found


def imports(path: Path) -> Iterator[str]:
    """Each `dprelease...` module a file imports, anywhere in it (names below `dprelease.`);
    `from dprelease.x import y` yields `x.y` when that is a module, else `x`."""
    known = modules()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith("dprelease."):
                continue
            base = node.module.removeprefix("dprelease.")
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            yield from submodules or [base]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dprelease."):
                    yield alias.name.removeprefix("dprelease.")
