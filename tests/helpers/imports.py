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


def imports(path: Path, package: str | None = None) -> Iterator[str]:
    """Each `dprelease...` module a file imports, anywhere in it (names below `dprelease.`):
    `from dprelease.x import y` yields `x.y` when that is a module, else `x`; `from dprelease
    import x` yields `x`; a relative import is resolved against the file's package; a string
    naming a module (`importlib.import_module("dprelease.x")`, a registry's entry) is one too.
    `package`: the file's package below `dprelease.` (default: where the file lies)."""
    known = modules()
    package = _package_of(path) if package is None else package
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            if base is None:
                continue
            prefix = f"{base}." if base else ""
            submodules = [f"{prefix}{a.name}" for a in node.names if f"{prefix}{a.name}" in known]
            yield from submodules or ([base] if base else [])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dprelease."):
                    yield alias.name.removeprefix("dprelease.")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value.removeprefix("dprelease.")
            if node.value.startswith("dprelease.") and named in known:
                yield named


def _package_of(path: Path) -> str | None:
    """The package (below `dprelease.`) a file of the library lives in; None outside it."""
    try:
        parts = path.resolve().relative_to(PACKAGE.resolve()).parts
    except ValueError:
        return None
    return ".".join(parts[:-1])


def _absolute(node: ast.ImportFrom, package: str | None) -> str | None:
    """The module an import-from names, below `dprelease.` ("" for `dprelease` itself); None
    when it is not the library's."""
    if node.level:
        if package is None:
            return None
        parts = package.split(".") if package else []
        parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
        return ".".join([*parts, *([node.module] if node.module else [])])
    if node.module == "dprelease":
        return ""
    if node.module and node.module.startswith("dprelease."):
        return node.module.removeprefix("dprelease.")
    return None
