"""Issue 36.2/36.3: statistic kinds, their methods, the local-DP protocols and the counting
engines are named only where they are registered (the accountants have
`test_accountant_names.py`).

A statistic's kind and method are the plan's words: `plan/stat_kinds.py` lists them, the plan's
statistic modules parse and describe them, and `stats/registry.py` maps each pair to its
object. Everywhere else (the statistics, charts, pages) asks the spec or the statistic object.
The guard reads every source file's syntax tree and refuses, outside those modules, a
comparison with such a name, a `match` case on one, a dict keyed by them, and a list of two or
more of them (a `Literal[...]` included).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from dprelease.data.engines.registry import ENGINES
from dprelease.ldp.registry import PROTOCOLS
from dprelease.plan.model_spec import FAMILIES, MODEL_METHODS
from dprelease.plan.stat_kinds import AUTO, METHODS, STAT_KINDS, SUMMARY_KINDS, other_methods
from dprelease.plan.summary_spec import SUMMARY_PARSERS
from dprelease.stats import models
from helpers import ROOT

STATISTIC_NAMES = (frozenset(STAT_KINDS) | {m for methods in METHODS.values() for m in methods}) - {
    AUTO  # issue 38.3: also `accounting: auto`, `strategy: auto`, `--engine auto`: no guard
}
STATISTIC_REGISTRY = {  # the plan's statistic modules, and the statistics' own registry
    f"dprelease/plan/{name}.py"
    for name in (
        "stat_kinds",
        "stat_spec",
        "summary_spec",
        "model_spec",
        "stat_text",
        "statistic_edit",
        "model_edit",
    )
} | {"dprelease/stats/registry.py", "dprelease/stats/models.py"}
ENGINE_PACKAGE = {  # the engines' registry, their policy (`choose_engine`) and the engines
    p.relative_to(ROOT).as_posix() for p in (ROOT / "dprelease/data/engines").glob("*.py")
}
VOCABULARIES = {
    "statistic kinds and methods": (STATISTIC_NAMES, STATISTIC_REGISTRY),
    "local-DP protocols": (frozenset(PROTOCOLS), {"dprelease/ldp/registry.py"}),
    "engines": (frozenset(e.name for e in ENGINES), ENGINE_PACKAGE),
}


def sources() -> list[Path]:
    found = [ROOT / "app.py"]
    for folder in ("dprelease", "ui", "pages"):
        found += sorted((ROOT / folder).rglob("*.py"))
    return found


def offences(tree: ast.AST, names: frozenset[str]) -> Iterator[tuple[int, str]]:
    def name(node: ast.AST) -> str | None:
        text = node.value if isinstance(node, ast.Constant) else None
        return text if isinstance(text, str) and text in names else None

    def held(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return [n for n in map(name, node.elts) if n is not None]
        single = name(node)
        return [] if single is None else [single]

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                for found in held(operand):
                    yield node.lineno, f"compares with {found!r}: {ast.unparse(node)}"
        elif isinstance(node, ast.match_case):
            for sub in ast.walk(node.pattern):
                if isinstance(sub, ast.MatchValue) and name(sub.value):
                    yield node.pattern.lineno, f"matches the name {name(sub.value)!r}"
        elif isinstance(node, ast.Dict) and any(k is not None and name(k) for k in node.keys):
            yield node.lineno, f"a dict keyed by names: {ast.unparse(node)[:60]}"
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Subscript):
            inner = node.slice if isinstance(node, ast.Subscript) else node
            if len(set(held(inner))) >= 2:
                yield node.lineno, f"a list of names: {ast.unparse(node)[:60]}"


def test_no_statistic_or_protocol_name_is_spelled_outside_its_registry() -> None:
    found = []
    for what, (names, registry) in VOCABULARIES.items():
        for path in sources():
            where = path.relative_to(ROOT).as_posix()
            if where in registry:
                continue
            tree = ast.parse(path.read_text("utf-8"))
            found += [f"{where}:{line}: {what}: {text}" for line, text in offences(tree, names)]
    assert found == [], "ask the registry or the spec instead:\n" + "\n".join(found)


def test_the_guard_sees_each_form_of_a_name() -> None:
    names = frozenset({"quantile", "mean", "smooth_sensitivity"})
    refused = [
        'if spec.kind == "quantile": pass',
        'if method in ("smooth_sensitivity",): pass',
        'match kind:\n    case "mean":\n        pass',
        'TEXT = {"mean": "a mean"}',
        'KINDS = ("quantile", "mean")',
        'Kind = Literal["quantile", "mean"]',
    ]
    allowed = ['if spec.kind == "count": pass', 'LABEL = "quantile"', "KINDS = SUMMARY_KINDS"]
    for text in refused:
        assert list(offences(ast.parse(text), names)), text
    for text in allowed:
        assert not list(offences(ast.parse(text), names)), text


def test_dispatch_tables_hold_exactly_their_registrys_names() -> None:
    """A table keyed by kind or family inside the registry answers every registered name."""
    assert set(SUMMARY_PARSERS) == set(SUMMARY_KINDS)
    assert set(models.MECHANISM_TEXT) == {m for ms in MODEL_METHODS.values() for m in ms}
    assert set(models._CALIBRATE_REGRESSION) == set(FAMILIES)
    assert other_methods() == tuple(dict.fromkeys(m for k in SUMMARY_KINDS for m in METHODS[k][1:]))


def test_a_files_data_carry_the_engine_choice_not_one_engines_options() -> None:
    """Issue 36.2: `FileData` names no engine's option (it held Spark's master); the choice,
    with its cluster's master, is one registry object asked by the count and the scan."""
    from dataclasses import fields

    from dprelease.data.engines.registry import ENGINES, EngineChoice
    from dprelease.release.sources import FileData

    assert [f.name for f in fields(FileData)] == ["location", "engine", "limits"]
    choice = EngineChoice(next(e.name for e in ENGINES if e.takes_master), "local[1]")
    assert choice.run().master == "local[1]"
    assert FileData("x.csv").engine == EngineChoice()
