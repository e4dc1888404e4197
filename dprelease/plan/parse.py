"""Plan files: parse a JSON/YAML mapping into a `Plan` and write it back.

`parse_plan` collects every problem (unknown keys with a "did you mean", wrong types, bad
domains, bad budgets) rather than stopping at the first, so `validate` can print them all.
`plan_to_dict` is its inverse: `parse_plan(plan_to_dict(p))` gives `p` back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from dprelease.errors import PlanError, quote
from dprelease.limits import MAX_CELLS
from dprelease.plan.fields import (
    BUDGET_KEYS,
    POSTPROCESS_KEYS,
    TOP_KEYS,
    UNIT_KEYS,
    Collector,
    discover_spec,
    flag,
    given,
    number_or_none,
    parse_clamp,
    parse_column,
    parse_synthetic,
    parse_table,
    parse_unit_column,
)
from dprelease.plan.model import (
    DEFAULT_ESTIMATE,
    PLAN_VERSION,
    Budget,
    Plan,
    Postprocess,
    unknown_column_problems,
)
from dprelease.plan.names import DATASET_NAME_RULE, is_dataset_name
from dprelease.plan.plan_text import read_plan_text
from dprelease.plan.schema import Column, NumericColumn, Schema
from dprelease.plan.size import check_plan_size
from dprelease.plan.stat_spec import parse_discover, stat_to_dict
from dprelease.plan.statistic import Discovery, StatisticTable
from dprelease.plan.table_spec import TableSpec, Unit
from dprelease.plan.zeros import parse_structural_zeros, zeros_to_list


def _schema(raw: object, bag: Collector) -> Schema | None:
    """The `columns:` section as a Schema (hierarchies checked), problems into `bag`."""
    columns: list[Column] = []
    raw_columns = bag.mapping(raw, "columns")
    for name, raw_column in (raw_columns or {}).items():
        column_raw = bag.mapping(raw_column, f"column {quote(name)}")
        if column_raw is not None:
            column = parse_column(str(name), column_raw, bag)
            if column is not None:
                columns.append(column)
    return bag.build(lambda: Schema(tuple(columns)))


def parse_schema(raw_columns: object, *, max_cells: int = MAX_CELLS) -> Schema:
    """A plan's `columns:` section alone as a Schema, every problem at once: the columns of a
    draft are checked before any table uses them. Too many domain values in all are refused
    first, as `parse_plan` does."""
    check_plan_size({"columns": raw_columns}, max_cells)
    bag = Collector()
    schema = _schema(raw_columns, bag)
    if bag.problems or schema is None:
        raise PlanError.from_problems(bag.problems or ["The columns could not be read."])
    return schema


def parse_plan(raw: object, base_dir: Path | None = None, *, max_cells: int = MAX_CELLS) -> Plan:
    """Build a `Plan` from its JSON/YAML mapping, reporting every problem at once.

    A plan with more than `max_cells` cells (or domain values) is refused first, counted from
    the mapping before any domain is expanded (`dprelease.plan.size`).
    """
    bag = Collector()
    top = bag.mapping(raw, "The plan")
    if top is None or not top:
        raise PlanError("The plan is empty or not a mapping; see the plan format in the README.")
    check_plan_size(top, max_cells)
    bag.keys(top, TOP_KEYS, "the plan")
    version = top.get("version", PLAN_VERSION)
    if isinstance(version, bool) or version != PLAN_VERSION:
        bag.problems.append(f"Plan version {quote(version)} is not supported (supported: 1).")

    schema = _schema(top.get("columns"), bag)

    raw_tables = top.get("tables", [])
    tables: list[TableSpec] = []
    invariants: list[TableSpec] = []
    statistics: list[StatisticTable] = []
    if not isinstance(raw_tables, list):
        bag.problems.append("tables must be a list, e.g. - {name: by_sex, by: [sex]}.")
    else:
        for index, raw_table in enumerate(raw_tables):
            spec = parse_table(raw_table, index, bag)
            if isinstance(spec, StatisticTable):
                statistics.append(spec)
            elif spec is not None and spec.invariant:
                invariants.append(spec)
            elif spec is not None:
                tables.append(spec)

    budget = _budget(top, bag)

    unit_raw = bag.mapping(top.get("unit"), "unit")
    unit = None
    if unit_raw is not None:
        bag.keys(unit_raw, UNIT_KEYS, "unit")
        unit = bag.build(
            lambda: Unit(
                **given(unit_raw, "kind", "max_rows"),
                column=parse_unit_column(unit_raw.get("column")),
            )
        )

    post_raw = bag.mapping(top.get("postprocess"), "postprocess")
    postprocess = None
    if post_raw is not None:
        bag.keys(post_raw, POSTPROCESS_KEYS, "postprocess")
        postprocess = bag.build(
            lambda: Postprocess(
                clamp=parse_clamp(post_raw.get("clamp")),
                **{
                    key: flag(post_raw, key)
                    for key in ("nonnegative", "integer", "consistent")
                    if key in post_raw
                },
                synthetic=parse_synthetic(post_raw.get("synthetic", False)),
                estimate=post_raw.get("estimate", DEFAULT_ESTIMATE),
            )
        )
    data = top.get("data")
    if data is not None and not isinstance(data, str):
        bag.problems.append(f"data must be a file path, got {quote(data)}.")
    dataset = top.get("dataset")
    if dataset is not None and not is_dataset_name(dataset):
        bag.problems.append(DATASET_NAME_RULE)

    zeros = bag.build(lambda: parse_structural_zeros(top.get("structural_zeros")))
    if bag.problems and schema is not None:
        every = (*tables, *invariants, *(s.table for s in statistics))
        bag.problems.extend(unknown_column_problems(every, schema.names))
    if (
        bag.problems
        or schema is None
        or budget is None
        or unit is None
        or postprocess is None
        or zeros is None
    ):
        raise PlanError.from_problems(bag.problems or ["The plan could not be read."])
    return Plan(
        schema=schema,
        tables=tuple(tables),
        budget=budget,
        unit=unit,
        **given(top, "neighbors"),
        postprocess=postprocess,
        data=data,
        dataset=dataset,
        base_dir=base_dir,
        statistics=tuple(statistics),
        discoveries=_discoveries(top.get("columns")),
        invariants=tuple(invariants),
        structural_zeros=zeros,
    )


def _discoveries(raw_columns: object) -> tuple[Discovery, ...]:
    """The columns with `domain: {discover: ...}` (already checked by the column parser)."""
    found = []
    for name, raw in (raw_columns if isinstance(raw_columns, dict) else {}).items():
        spec = discover_spec(raw) if isinstance(raw, dict) else None
        if spec is not None:
            found.append(Discovery(str(name), parse_discover(spec, str(name))))
    return tuple(found)


# --- serialising ----------------------------------------------------------------------------


def _column_to_dict(column: Column, discovered: dict[str, Discovery]) -> dict[str, Any]:
    if column.name in discovered:
        min_count = discovered[column.name].spec.min_count
        return {"kind": "categorical", "domain": {"discover": {"min_count": min_count}}}
    if isinstance(column, NumericColumn):
        out: dict[str, Any] = {"kind": "numeric", "bins": list(column.edges)}
        if column.bin_labels is not None:
            out["labels"] = list(column.bin_labels)
    else:
        out = {"kind": "categorical", "domain": list(column.domain)}
        if column.other is not None:
            out["other"] = column.other
        if column.parent is not None:
            out["parent"] = column.parent
            out["parent_map"] = dict(column.parent_map or {})
        if column.value_labels:
            out["labels"] = dict(column.value_labels)
    if column.domain_source != "plan":
        out["domain_source"] = column.domain_source
    return out


def _table_to_dict(spec: TableSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name, "by": list(spec.by)}
    if spec.weight != 1:
        out["weight"] = spec.weight
    for key in ("epsilon", "rho", "delta"):
        if getattr(spec, key) is not None:
            out[key] = getattr(spec, key)
    if spec.target is not None:
        key = "moe" if spec.target.moe is not None else "moe_table"
        out["target"] = {key: getattr(spec.target, key)}
    if spec.invariant:
        out["invariant"] = True
    if spec.survey_weight is not None:
        out["survey_weight"] = spec.survey_weight.to_dict()
    return out


def _budget(top: Mapping[str, Any], bag: Collector) -> Budget | None:
    budget_raw = bag.mapping(top.get("budget"), "budget")
    if budget_raw is None:
        return None
    bag.keys(budget_raw, BUDGET_KEYS, "budget")
    return bag.build(
        lambda: Budget(
            **_budget_choices(budget_raw, top.get("strategy"), bag),
            epsilon=number_or_none(budget_raw, "epsilon", "budget"),
            delta=number_or_none(budget_raw, "delta", "budget"),
            rho=number_or_none(budget_raw, "rho", "budget"),
        )
    )


def with_budget(plan: Plan, raw: object) -> Plan:
    """`plan` with the budget (and top-level `strategy`) of the plan mapping `raw`, whose every
    other part `plan` was parsed from: the dashboard's what-if, where only the budget moved.
    The columns and their domains are not parsed again, and the plan keeps its `Schema`
    object, whose digest keys the allocation's caches. Problems are those `parse_plan(raw)`
    reports: the rest of the plan has none."""
    bag = Collector()
    top = bag.mapping(raw, "The plan")
    budget = _budget(top, bag) if top else None
    if bag.problems or budget is None:
        raise PlanError.from_problems(bag.problems or ["The plan could not be read."])
    return replace(plan, budget=budget)


def _budget_choices(
    budget_raw: Mapping[str, Any], top_strategy: object, bag: Collector
) -> dict[str, Any]:
    """accounting, allocation, confidence and strategy as the plan writes them.

    `strategy` may sit at the top of the plan or in `budget`. Under `strategy: workload` an
    unwritten allocation is `equal` (what plans meant before strategies existed), so an
    explicit accountant with `strategy: workload` reproduces the earlier releases.
    """
    choices = given(budget_raw, "accounting", "allocation", "confidence", "strategy")
    if top_strategy is not None:
        if "strategy" in choices and choices["strategy"] != top_strategy:
            bag.problems.append("strategy is given twice with different values; give it once.")
        choices["strategy"] = top_strategy
    if choices.get("strategy") == "workload" and "allocation" not in choices:
        choices["allocation"] = "equal"
    return choices


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan's JSON/YAML mapping; `parse_plan(plan_to_dict(p))` gives `p` back."""
    budget = plan.budget
    out: dict[str, Any] = {"version": PLAN_VERSION}
    if plan.data is not None:
        out["data"] = plan.data
    if plan.dataset is not None:
        out["dataset"] = plan.dataset
    unit: dict[str, Any] = {"kind": plan.unit.kind}
    if plan.unit.kind == "id":
        unit.update(column=plan.unit.column, max_rows=plan.unit.max_rows)
    out["unit"] = unit
    out["neighbors"] = plan.neighbors
    discovered = {d.column: d for d in plan.discoveries}
    out["columns"] = {c.name: _column_to_dict(c, discovered) for c in plan.schema.columns}
    out["tables"] = [_table_to_dict(spec) for spec in (*plan.tables, *plan.invariants)] + [
        {**_table_to_dict(s.table), "stat": stat_to_dict(s.stat)} for s in plan.statistics
    ]
    out["budget"] = {
        key: getattr(budget, key) for key in BUDGET_KEYS if getattr(budget, key) is not None
    }
    out["postprocess"] = plan.postprocess.to_dict()
    if plan.structural_zeros:
        out["structural_zeros"] = zeros_to_list(plan.structural_zeros)
    return out


def dumps_plan(plan: Plan, fmt: Literal["yaml", "json"] = "yaml") -> str:
    """The plan as YAML or JSON text."""
    mapping = plan_to_dict(plan)
    if fmt == "json":
        return json.dumps(mapping, indent=2, ensure_ascii=False) + "\n"
    from dprelease.plan.yaml_text import plan_yaml

    return plan_yaml(mapping)


def loads_plan(
    text: str,
    fmt: Literal["yaml", "json"],
    base_dir: Path | None = None,
    *,
    max_cells: int = MAX_CELLS,
) -> Plan:
    """Parse plan text (`plan_text.read_plan_text`: YAML or JSON read safely), then check it."""
    return parse_plan(read_plan_text(text, fmt), base_dir, max_cells=max_cells)


def plan_format(path: Path) -> Literal["yaml", "json"]:
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    raise PlanError(f"Plan file '{path.name}' must end in .yaml, .yml or .json.")


def load_plan(path: str | Path, *, max_cells: int = MAX_CELLS) -> Plan:
    """Read a plan file (format from its extension)."""
    path = Path(path)
    fmt = plan_format(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise PlanError(f"Plan file '{path}' does not exist.") from None
    except IsADirectoryError:
        raise PlanError(f"Plan path '{path}' is a folder; give a .yaml or .json file.") from None
    except UnicodeDecodeError:
        raise PlanError(f"Plan file '{path.name}' is not UTF-8 text.") from None
    return loads_plan(text, fmt, base_dir=path.parent, max_cells=max_cells)


def save_plan(plan: Plan, path: str | Path) -> None:
    path = Path(path)
    path.write_text(dumps_plan(plan, plan_format(path)), encoding="utf-8")
