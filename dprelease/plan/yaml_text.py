"""Plan files as YAML that people can read and every YAML reader reads back the same.

Lists of plain values and flat mappings go in flow style (3,143 county codes fit in a few
hundred lines); sections and columns stay blocks; all-digit text is quoted so that "01" and
"08001" stay text for YAML 1.2 readers too (which would read 08001 as a number).
"""

from __future__ import annotations

import functools
from typing import Any

BLOCK_SECTIONS = ("budget", "postprocess")
YAML11_BOOLEAN_LETTERS = frozenset("yYnN")


class _Block(dict[str, Any]):
    """A mapping the plan YAML writes as a block even though its values are all plain."""


def _is_flat(value: object) -> bool:
    """Plain values and lists of them: what fits on a line (or a wrapped run of lines)."""
    if isinstance(value, list | tuple):
        return all(not isinstance(item, dict | list | tuple) for item in value)
    return not isinstance(value, dict)


@functools.cache
def _plan_dumper() -> type[Any]:
    """A YAML dumper that writes lists and flat mappings in flow style, digit text quoted.

    Flow style keeps the 3,143 county codes and their parents in a few hundred lines; quoting
    "01" and "08001" keeps them text for every YAML reader (YAML 1.2 would read 08001 as int).
    """
    import yaml

    class PlanDumper(yaml.SafeDumper):
        def write_plain(self, text: str, split: bool = True) -> None:
            super().write_plain(text, split=False)  # never fold a label across lines

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        # "N" (not applicable) and "Y" are booleans to YAML 1.1 readers other than PyYAML
        style = "'" if value.isdigit() or value in YAML11_BOOLEAN_LETTERS else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    def sequence(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=_is_flat(value))

    def mapping(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.Node:
        flat = type(value) is not _Block and all(_is_flat(v) for v in value.values())
        return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flat)

    PlanDumper.add_representer(str, text)
    PlanDumper.add_representer(list, sequence)
    PlanDumper.add_representer(dict, mapping)
    PlanDumper.add_representer(_Block, mapping)
    return PlanDumper


def plan_yaml(mapping: dict[str, Any]) -> str:
    """The YAML text of a plan mapping (as `planfile.plan_to_dict` makes it)."""
    import yaml

    plan = dict(mapping)
    if isinstance(plan.get("columns"), dict):
        plan["columns"] = {name: _Block(spec) for name, spec in plan["columns"].items()}
    for section in BLOCK_SECTIONS:
        if isinstance(plan.get(section), dict):
            plan[section] = _Block(plan[section])
    dumper = _plan_dumper()
    return str(yaml.dump(plan, Dumper=dumper, sort_keys=False, allow_unicode=True, width=90))
