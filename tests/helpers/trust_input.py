"""Helpers shared by the tests (moved from test_trust_input.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


TAIL = "tables: [{name: t, by: [a]}]\nbudget: {accounting: pure, epsilon: 1}\n"


def alias_bomb(levels: int = 9, fan: int = 9) -> str:
    """The billion laughs: each level is a list of `fan` aliases of the level below."""
    lines = ['l0: &l0 ["lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * fan)}]")
    body = "\n".join("  " + line for line in lines)
    return f"bomb:\n{body}\ncolumns:\n  a: {{kind: categorical, domain: *l{levels}}}\n{TAIL}"


def wide_plan(columns: int, last: int = 999_999, one_table: bool = True) -> str:
    names = [f"c{i}" for i in range(columns)]
    text = "columns:\n" + "".join(
        f"  {n}: {{kind: categorical, domain: {{range: [0, {last}]}}}}\n" for n in names
    )
    tables = [names] if one_table else [[n] for n in names]
    text += "tables:\n" + "".join(f"  - {{name: t{i}, by: {by}}}\n" for i, by in enumerate(tables))
    return text.replace("'", "") + "budget: {accounting: pure, epsilon: 1}\n"
