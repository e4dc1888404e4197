"""No code compares an accountant's name outside the accountant registry (issue 26).

Accountants are objects (`dprelease/accounting/accountants/`): the rest of the library, the
dashboard's `ui/` and `pages/` ask an accountant for its unit, its δ, its mechanism or its
strategy, and never branch on the text of `budget.accounting`. This test reads every source
file's syntax tree and fails on:

- a comparison with an accountant's name (`==`, `!=`, `in`/`not in` a literal tuple, list or
  set), `auto` included where the other side is an accounting;
- a `match` case on such a name;
- a dict keyed by such names (labels, mechanisms per accountant);
- a second list of the accountants: a literal tuple, list, set or `Literal[...]` holding two
  or more of their names.

The names are the registry's own, so an accountant added there is guarded at once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from dprelease.accounting.accountants.registry import ACCOUNTANTS, AUTO
from helpers import ROOT

REGISTRY = ROOT / "dprelease" / "accounting" / "accountants"
NAMES = frozenset(ACCOUNTANTS)


def sources() -> list[Path]:
    """The library, the dashboard's ui/ and pages/, and app.py; the registry left out."""
    found = [ROOT / "app.py"]
    for folder in ("dprelease", "ui", "pages"):
        found += sorted((ROOT / folder).rglob("*.py"))
    return [p for p in found if p.exists() and REGISTRY not in p.parents]


def _name(node: ast.AST) -> str | None:
    """The accountant name (or `auto`) a node is a literal of."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    return node.value if node.value in NAMES or node.value == AUTO else None


def _names_in(node: ast.AST) -> list[str]:
    """The names a literal holds: itself, or the elements of a tuple, list or set."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for n in map(_name, node.elts) if n is not None]
    name = _name(node)
    return [] if name is None else [name]


def _about_accounting(node: ast.AST) -> bool:
    """True when an expression reads an accounting (`plan.budget.accounting`, `accounting`,
    an accountant's `winner`): where a bare `auto` is the accountant's `auto`."""
    text = ast.unparse(node).lower()
    return "accounting" in text or "accountant" in text or "winner" in text


def _offences(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                others = [o for o in operands if o is not operand]
                for name in _names_in(operand):
                    if name != AUTO or any(_about_accounting(o) for o in others):
                        yield node.lineno, f"compares with {name!r}: {ast.unparse(node)}"
        elif isinstance(node, ast.match_case):
            for sub in ast.walk(node.pattern):
                if isinstance(sub, ast.MatchValue) and _name(sub.value) in NAMES:
                    yield node.pattern.lineno, f"matches the name {_name(sub.value)!r}"
        elif isinstance(node, ast.Dict):
            keyed = [k for k in node.keys if k is not None and _name(k) in NAMES]
            if keyed:
                yield node.lineno, f"a dict keyed by accountant names: {_name(keyed[0])!r}, …"
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Subscript):
            inner = node.slice if isinstance(node, ast.Subscript) else node
            held = {n for n in _names_in(inner) if n in NAMES}
            if len(held) >= 2:
                yield node.lineno, f"a list of accountants: {ast.unparse(node)}"


def offences_in(text: str) -> list[tuple[int, str]]:
    return sorted(set(_offences(ast.parse(text))))


def test_no_accountant_name_is_compared_outside_the_registry() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in sources()
        for line, what in offences_in(path.read_text("utf-8"))
    ]
    assert found == [], "ask the accountant object instead:\n" + "\n".join(found)


def test_the_guard_sees_each_kind_of_name_comparison() -> None:
    """The guard itself: each form it must refuse, and what it must let pass."""
    refused = [
        'if budget.accounting == "zcdp": pass',
        'if "pure" != accounting: pass',
        'if accounting in ("pure", "auto"): pass',
        'if plan.budget.accounting not in {"approx"}: pass',
        'if plan.budget.accounting == "auto": pass',
        'match accounting:\n    case "advanced":\n        pass',
        'LABELS = {"pure": "pure ε-DP"}',
        'Accounting = Literal["pure", "zcdp"]',
        'ORDER = ("zcdp", "approx")',
    ]
    allowed = [
        'if plan.budget.strategy == "auto": pass',  # the strategy's auto, not the accountant's
        'if engine in ("auto", "spark"): pass',
        'Guarantee(1.0, 1e-9, composition="advanced")',  # a composition bound's name
        "share = Share(PURE.name, epsilon=1.0)",
        "if accountant.in_rho: pass",
    ]
    for text in refused:
        assert offences_in(text), text
    for text in allowed:
        assert not offences_in(text), text


def unit_branches_in(text: str) -> list[str]:
    """Branches on the budget's unit: `.in_rho`, or a comparison of a `.unit` with a unit's
    name (issue 36.1: the accountant answers; no other code asks which unit it adds in)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr == "in_rho":
            found.append(f"{node.lineno}: .in_rho")
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            reads_unit = any(isinstance(o, ast.Attribute) and o.attr == "unit" for o in operands)
            names = {o.value for o in operands if isinstance(o, ast.Constant)}
            if reads_unit and names & {"rho", "epsilon"}:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_code_branches_on_the_budgets_unit_outside_the_accountants() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sources()
        for line in unit_branches_in(path.read_text("utf-8"))
    ]
    assert found == [], "ask the accountant (or the target) instead:\n" + "\n".join(found)
    assert unit_branches_in("x = a.in_rho") and unit_branches_in('y = c.unit == "rho"')
    assert not unit_branches_in('z = plan.unit.kind == "id"')
