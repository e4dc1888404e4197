"""Issue 36.3: the dashboard asks the library's registries for its choices; it keeps no list
of its own of the plan's allocations, strategies, accountants or column kinds."""

from __future__ import annotations

import ast

from dprelease.accounting.accountants.registry import ACCOUNTANTS
from dprelease.plan.model import ALLOCATIONS, STRATEGIES
from dprelease.plan.schema import COLUMN_KINDS
from helpers import ROOT

VOCABULARIES = {
    "allocations": set(ALLOCATIONS),
    "strategies": set(STRATEGIES),
    "accountants": set(ACCOUNTANTS),
    "column kinds": set(COLUMN_KINDS),
}


def _string_collections(tree: ast.AST):  # type: ignore[no-untyped-def]
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) >= 2 and all(isinstance(i, str) for i in items):
                yield set(items)
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            if len(keys) >= 2 and all(isinstance(k, str) for k in keys):
                yield set(keys)


def test_the_dashboard_keeps_no_list_of_the_plans_words():
    found = []
    for folder in ("ui", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for items in _string_collections(ast.parse(path.read_text("utf-8"))):
                for name, words in VOCABULARIES.items():
                    if len(items & words) >= 2:
                        found.append(f"{path.relative_to(ROOT)}: {name} {sorted(items & words)}")
    assert found == []
