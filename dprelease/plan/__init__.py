"""The release plan as values: model (Plan, Budget), parse (YAML/JSON in and out), the
tables and the privacy unit, column domains, edits for the dashboard's draft, size limits.

Public names are re-exported lazily (imported on first use); library code imports them from
their module.
"""

from typing import Any

from dprelease._lazy import lazy_attribute

_HOMES = {
    "Budget": "model",
    "CategoricalColumn": "schema",
    "NumericColumn": "schema",
    "Plan": "model",
    "Postprocess": "model",
    "Schema": "schema",
    "Sensitivity": "table_spec",
    "TableSpec": "table_spec",
    "Target": "table_spec",
    "Unit": "table_spec",
    "check_plan": "model",
    "dumps_plan": "parse",
    "load_plan": "parse",
    "loads_plan": "parse",
    "parse_plan": "parse",
    "plan_to_dict": "parse",
    "plan_yaml": "yaml_text",
    "save_plan": "parse",
    "sensitivity": "table_spec",
}

__all__ = [
    "Budget",
    "CategoricalColumn",
    "NumericColumn",
    "Plan",
    "Postprocess",
    "Schema",
    "Sensitivity",
    "TableSpec",
    "Target",
    "Unit",
    "check_plan",
    "dumps_plan",
    "load_plan",
    "loads_plan",
    "parse_plan",
    "plan_to_dict",
    "plan_yaml",
    "save_plan",
    "sensitivity",
]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)
