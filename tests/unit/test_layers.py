"""The library's layers, read from its own imports (issue 26).

The module map in `dprelease/__init__.py` states the order: each top-level line imports only
from lines above it or from its own subpackage. Every import is read (module-level,
`TYPE_CHECKING` and function-level alike), from the source, so a lazy import cannot hide one.

The order is kept: no import runs against it and no modules import each other in a circle, so
the two lists below are empty and any import against the order, or any circle, fails the tests.
They stay as lists so that a failure shows the pair of layers (and the count) or the circle.
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict

from helpers.imports import PACKAGE, imports, modules

AGAINST_THE_ORDER: dict[tuple[str, str], int] = {}
"""(importing layer, imported layer): how many imports run against the stated order (none)."""

CIRCLES: set[frozenset[str]] = set()
"""Modules that import each other in a loop today (names below `dprelease.`)."""


def stated_order() -> list[str]:
    """The top-level lines of the module map, in order (`plan/` → plan, `cli.py` → cli)."""
    docstring = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text("utf-8")))
    assert docstring is not None
    return [m.group(1) for m in re.finditer(r"^- (\w+)(?:/|\.py)", docstring, re.MULTILINE)]


def test_the_module_map_names_every_top_level_part() -> None:
    order = stated_order()
    top = {name.split(".")[0] for name in modules()} - {"_lazy", "__main__"}
    assert set(order) == top, "the module map in dprelease/__init__.py lists every part once"


def test_no_new_import_against_the_stated_order() -> None:
    rank = {name: i for i, name in enumerate(stated_order())}
    rank["_lazy"] = -1  # the lazy re-export helper sits under everything
    found: Counter[tuple[str, str]] = Counter()
    for name, path in modules().items():
        layer = name.split(".")[0]
        if layer == "__main__" or ("." not in name and path.name == "__init__.py"):
            continue
        for imported in imports(path):
            target = imported.split(".")[0]
            if target != layer and rank[target] > rank[layer]:
                found[(layer, target)] += 1
    assert dict(found) == AGAINST_THE_ORDER


def test_no_new_circle_of_modules() -> None:
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        graph[name] |= {m for m in imports(path) if m in known and m != name}
    assert set(strongly_connected(graph, list(known))) == CIRCLES


def strongly_connected(graph: dict[str, set[str]], nodes: list[str]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components of more than one node, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[frozenset[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(frozenset(component))
    return circles


def test_the_import_reader_sees_every_form_of_import(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 36: the guard missed `from dprelease import cli`, relative imports and a module
    named in a string (`importlib.import_module`, a registry); it reads them all now."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from dprelease import cli\n"
        "from ..ledger import store\n"
        "from . import service\n"
        "import importlib\n"
        "importlib.import_module('dprelease.graph.command')\n",
        "utf-8",
    )
    found = set(imports(probe, package="release"))
    assert {"cli", "ledger.store", "release.service", "graph.command"} <= found


def test_the_library_never_imports_the_dashboard() -> None:
    """`dprelease` is the library: the dashboard (`ui/`, `pages/`, Streamlit) sits above it."""
    found = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            found += [(name, n) for n in names if n.split(".")[0] in {"ui", "pages", "streamlit"}]
    assert found == []


def test_the_dashboards_parts_never_import_its_pages() -> None:
    """`ui/` holds the pages' parts; a page imports them, never the other way round."""
    from helpers import ROOT

    found = []
    for path in sorted((ROOT / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pages"):
                found.append(path.name)
            if isinstance(node, ast.Import):
                found += [path.name for a in node.names if a.name.startswith("pages")]
    assert found == []
