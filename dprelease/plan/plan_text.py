"""Plan text read safely (YAML or JSON) into plain values, before the plan is checked.

A syntax error is a `PlanError` with the line it is on; a key given twice is refused (the last
value would silently win: a second, larger epsilon); YAML aliases (``*name``) are refused, as
a few hundred bytes of nested aliases expand to billions of values (the "billion laughs") and a
plan never needs them; δ written 1e-10 is a number, and an unquoted code with a leading zero
(01, 08001) is text.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Literal

from dprelease.errors import PlanError, quote


def read_plan_text(text: str, fmt: Literal["yaml", "json"]) -> object:
    """The plain values of plan text (see the module docstring)."""
    import yaml  # here, not at the top: keeps the command line's start-up light

    try:
        if fmt == "json":
            raw = json.loads(text, object_pairs_hook=_unique_keys)
        else:
            raw = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader, see below
    except PlanError:
        raise
    except json.JSONDecodeError as error:
        message = f"The plan is not valid JSON: {error.msg} at line {error.lineno}."
        raise PlanError(message) from None
    except RecursionError:
        raise PlanError("The plan is nested too deeply to be a plan.") from None
    except ValueError:  # e.g. int() of a number with more than 4,300 digits
        raise PlanError("The plan holds a number too long to read.") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "syntax error"
        raise PlanError(f"The plan is not valid YAML: {problem}{line}.") from None
    return raw


def _duplicate_key(key: object) -> PlanError:
    # A key given twice would silently keep the last value: e.g. a second, larger epsilon.
    return PlanError(
        f"The plan gives the key {quote(key)} twice in one mapping; give each key once."
    )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON objects with every key once."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _duplicate_key(key)
        out[key] = value
    return out


@functools.cache
def _yaml_loader() -> Any:
    """PyYAML's SafeLoader, also reading 1e-10 as a number (YAML 1.1 wants 1.0e-10), and an
    unquoted number with a leading zero (01, 08001) as text, the code it is.

    People write δ as 1e-10; read as text, it would be refused as "not a number".
    """
    import yaml

    # libyaml's parser when PyYAML has it: a large plan (a county parent_map) parses about ten
    # times faster, which matters when many dashboard sessions load plans at once.
    safe_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class PlanLoader(safe_loader):  # type: ignore[misc, valid-type]
        def construct_document(self, node: Any) -> Any:
            _refuse_aliases(node)  # before a single value is built
            return super().construct_document(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise _duplicate_key(key)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    exponent = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")
    PlanLoader.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789."))
    # Codes such as 01 or 08001 written without quotes are text (YAML 1.1 reads 01 as the
    # octal number 1 and 08 as text): checked before every other resolver of these letters.
    leading_zero = re.compile(r"^[-+]?0[0-9_]+$")
    for first in "-+0":
        resolvers = PlanLoader.yaml_implicit_resolvers.setdefault(first, [])
        resolvers.insert(0, ("tag:yaml.org,2002:str", leading_zero))
    return PlanLoader


def _refuse_aliases(root: Any) -> None:
    """Refuse a YAML node graph in which a node is reached twice: that is what an alias is.

    The parser shares the anchored node rather than copying it, so the graph stays as small as
    the text; walking it once (without recursion, as plans may nest deeply) finds any alias
    before the constructor would expand it.
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise PlanError(
                f"The plan repeats the value at line {node.start_mark.line + 1} with a YAML "
                "alias (*name); plans may not use aliases: write the value out."
            )
        seen.add(id(node))
        if isinstance(node.value, list):  # a sequence's nodes, or a mapping's (key, value) pairs
            for item in node.value:
                stack.extend(item if isinstance(item, tuple) else (item,))
