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
