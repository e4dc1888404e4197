"""Plan files: parse a JSON/YAML mapping into a `Plan` and write it back.

`parse_plan` collects every problem (unknown keys with a "did you mean", wrong types, bad
domains, bad budgets) rather than stopping at the first, so `validate` can print them all.
`plan_to_dict` is its inverse: `parse_plan(plan_to_dict(p))` gives `p` back.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from dprelease.errors import DPReleaseError, PlanError, quote
from dprelease.limits import MAX_CELLS
from dprelease.plan.model import (
    PLAN_VERSION,
    Budget,
    Plan,
    Postprocess,
    did_you_mean,
    unknown_column_problems,
)
from dprelease.plan.schema import CategoricalColumn, Column, NumericColumn, Schema, is_number
from dprelease.plan.size import check_plan_size
from dprelease.plan.table_spec import TableSpec, Target, Unit

T = TypeVar("T")
TOP_KEYS = (
    "version",
    "data",
    "dataset",
    "unit",
    "neighbors",
    "columns",
    "tables",
    "budget",
    "postprocess",
)
COLUMN_KEYS = ("kind", "domain", "other", "bins", "parent", "parent_map", "domain_source")
TABLE_KEYS = ("name", "by", "weight", "epsilon", "rho", "delta", "target")
BUDGET_KEYS = ("accounting", "epsilon", "delta", "rho", "allocation", "confidence")
POSTPROCESS_KEYS = ("clamp", "nonnegative", "integer", "consistent")
UNIT_KEYS = ("kind", "column", "max_rows")
TARGET_KEYS = ("moe", "moe_table")


class _Collector:
    """Gathers problems while a plan is parsed, so that all of them are reported at once."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def keys(self, raw: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in raw:
            if key not in allowed:
                self.problems.append(
                    f"Unknown key {quote(key)} in {where} (allowed: {', '.join(allowed)})."
                    + did_you_mean(str(key), allowed)
                )

    def mapping(self, raw: object, where: str) -> Mapping[str, Any] | None:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.problems.append(f"{where} must be a mapping of keys to values.")
            return None
        return raw

    def build(self, make: Callable[[], T]) -> T | None:
        try:
            return make()
        except DPReleaseError as error:
            self.problems.extend(error.problems)
        except (TypeError, ValueError) as error:
            self.problems.append(str(error))
        return None


def _number_or_none(raw: Mapping[str, Any], key: str, where: str) -> Any:
    value = raw.get(key)
    if value is not None and not is_number(value):
        raise PlanError(f"{where}.{key} must be a number, got {quote(value)}.")
    return value


def _bool(raw: Mapping[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise PlanError(f"postprocess.{key} must be true or false, got {quote(value)}.")
    return value


def _domain(raw: object, where: str) -> tuple[Any, ...]:
    if isinstance(raw, Mapping) and set(raw) == {"range"}:
        bounds = raw["range"]
        if (
            not isinstance(bounds, list)
            or len(bounds) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
            or bounds[0] > bounds[1]
        ):
            raise PlanError(f"{where}: domain range must be [first, last] whole numbers.")
        if bounds[1] - bounds[0] >= 1_000_000:
            raise PlanError(f"{where}: a domain range may have at most 1,000,000 values.")
        return tuple(range(bounds[0], bounds[1] + 1))
    if not isinstance(raw, list):
        raise PlanError(f"{where}: domain must be a list of values or {{range: [first, last]}}.")
    for value in raw:
        if not (isinstance(value, str) or is_number(value)):
            raise PlanError(f"{where}: domain values must be text or numbers, got {quote(value)}.")
    return tuple(raw)


def _bins(raw: object, where: str) -> tuple[int | float, ...]:
    if isinstance(raw, Mapping):
        if set(raw) != {"start", "stop", "width"}:
            raise PlanError(f"{where}: bins are a list of edges or {{start, stop, width}}.")
        start, stop, width = raw["start"], raw["stop"], raw["width"]
        if not all(is_number(v) for v in (start, stop, width)) or width <= 0 or stop <= start:
            raise PlanError(f"{where}: bins need numbers with start < stop and width > 0.")
        count = int((stop - start) // width)
        if count > 1_000_000:
            raise PlanError(f"{where}: at most 1,000,000 bins are allowed.")
        edges: list[int | float] = [start + i * width for i in range(count + 1)]
        if isinstance(width, float) or isinstance(start, float):
            edges = [round(e, 12) for e in edges]
        if edges[-1] < stop:
            edges.append(stop)
        return tuple(edges)
    if not isinstance(raw, list):
        raise PlanError(f"{where}: bins must be a list of edges, e.g. [0, 18, 65, 120].")
    return tuple(raw)


def _column(name: str, raw: Mapping[str, Any], bag: _Collector) -> Column | None:
    where = f"column {quote(name)}"
    bag.keys(raw, COLUMN_KEYS, where)
    kind = raw.get("kind", "categorical" if "domain" in raw else "numeric")
    source = raw.get("domain_source", "plan")
    if source not in ("plan", "data"):
        bag.problems.append(
            f"{where}: domain_source must be 'plan' or 'data', got {quote(source)}."
        )
        return None
    if kind == "categorical":
        if "bins" in raw:
            bag.problems.append(f"{where} is categorical; `bins` is for numeric columns.")
        parent_map = raw.get("parent_map")
        if parent_map is not None and not isinstance(parent_map, Mapping):
            bag.problems.append(f"{where}: parent_map must map child values to parent values.")
            return None
        return bag.build(
            lambda: CategoricalColumn(
                name=name,
                domain=_domain(raw.get("domain"), f"Column {quote(name)}"),
                other=raw.get("other"),
                parent=raw.get("parent"),
                parent_map=(
                    {str(k): str(v) for k, v in parent_map.items()} if parent_map else None
                ),
                domain_source=source,
            )
        )
    if kind == "numeric":
        for key in ("domain", "other", "parent", "parent_map"):
            if key in raw:
                bag.problems.append(f"{where} is numeric; `{key}` is for categorical columns.")
        if "bins" not in raw:
            bag.problems.append(f"{where} is numeric and needs `bins` (a list of edges).")
            return None
        return bag.build(
            lambda: NumericColumn(
                name=name, edges=_bins(raw["bins"], f"Column {quote(name)}"), domain_source=source
            )
        )
    bag.problems.append(
        f"{where}: kind must be 'categorical' or 'numeric', got {quote(kind)}."
        + did_you_mean(str(kind), ["categorical", "numeric"])
    )
    return None


def _table(raw: object, index: int, bag: _Collector) -> TableSpec | None:
    table = bag.mapping(raw, f"tables[{index}]")
    if table is None:
        return None
    where = f"table {quote(table.get('name', index))}"
    bag.keys(table, TABLE_KEYS, where)
    by = table.get("by", [])
    if isinstance(by, str):
        by = [by]
    if not isinstance(by, list) or not all(_is_name(c) for c in by):
        bag.problems.append(
            f"{where}: `by` must be a list of column names (quote names that look like "
            "numbers, e.g. '2020')."
        )
        return None
    by = [str(c) for c in by]
    target_raw = bag.mapping(table.get("target"), f"{where} target")
    if target_raw is None:
        return None
    bag.keys(target_raw, TARGET_KEYS, f"{where} target")
    return bag.build(
        lambda: TableSpec(
            name=table.get("name", f"table_{index + 1}"),
            by=tuple(by),
            weight=table.get("weight", 1.0),
            epsilon=_number_or_none(table, "epsilon", where),
            rho=_number_or_none(table, "rho", where),
            delta=_number_or_none(table, "delta", where),
            target=(
                Target(
                    moe=_number_or_none(target_raw, "moe", where + ".target"),
                    moe_table=_number_or_none(target_raw, "moe_table", where + ".target"),
                )
                if target_raw
                else None
            ),
        )
    )


def _is_name(value: object) -> bool:
    """Column names are text; a whole number is taken as its text, as YAML keys are."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _unit_column(raw: object) -> Any:
    """The unit id column's name as text (a whole number as its text); anything else is refused."""
    if raw is None or isinstance(raw, str):
        return raw
    if _is_name(raw):
        return str(raw)
    raise PlanError(f"unit.column must be a column name, got {quote(raw)}.")


def _clamp(raw: object) -> tuple[Any, Any]:
    if raw is None:
        return (None, None)
    if not isinstance(raw, list) or len(raw) != 2:
        raise PlanError("postprocess.clamp must be [lower, upper], each a number or null.")
    return (raw[0], raw[1])


def parse_plan(raw: object, base_dir: Path | None = None, *, max_cells: int = MAX_CELLS) -> Plan:
    """Build a `Plan` from its JSON/YAML mapping, reporting every problem at once.

    A plan with more than `max_cells` cells (or domain values) is refused first, counted from
    the mapping before any domain is expanded (`dprelease.plan.size`).
    """
    bag = _Collector()
    top = bag.mapping(raw, "The plan")
    if top is None or not top:
        raise PlanError("The plan is empty or not a mapping; see the plan format in the README.")
    check_plan_size(top, max_cells)
    bag.keys(top, TOP_KEYS, "the plan")
    version = top.get("version", PLAN_VERSION)
    if isinstance(version, bool) or version != PLAN_VERSION:
        bag.problems.append(f"Plan version {quote(version)} is not supported (supported: 1).")

    columns: list[Column] = []
    raw_columns = bag.mapping(top.get("columns"), "columns")
    for name, raw_column in (raw_columns or {}).items():
        column_raw = bag.mapping(raw_column, f"column {quote(name)}")
        if column_raw is not None:
            column = _column(str(name), column_raw, bag)
            if column is not None:
                columns.append(column)
    schema = bag.build(lambda: Schema(tuple(columns)))

    raw_tables = top.get("tables", [])
    tables: list[TableSpec] = []
    if not isinstance(raw_tables, list):
        bag.problems.append("tables must be a list, e.g. - {name: by_sex, by: [sex]}.")
    else:
        for index, raw_table in enumerate(raw_tables):
            spec = _table(raw_table, index, bag)
            if spec is not None:
                tables.append(spec)

    budget_raw = bag.mapping(top.get("budget"), "budget")
    budget = None
    if budget_raw is not None:
        bag.keys(budget_raw, BUDGET_KEYS, "budget")
        budget = bag.build(
            lambda: Budget(
                accounting=budget_raw.get("accounting", "zcdp"),
                epsilon=_number_or_none(budget_raw, "epsilon", "budget"),
                delta=_number_or_none(budget_raw, "delta", "budget"),
                rho=_number_or_none(budget_raw, "rho", "budget"),
                allocation=budget_raw.get("allocation", "equal"),
                confidence=budget_raw.get("confidence", 0.95),
            )
        )

    unit_raw = bag.mapping(top.get("unit"), "unit")
    unit = None
    if unit_raw is not None:
        bag.keys(unit_raw, UNIT_KEYS, "unit")
        unit = bag.build(
            lambda: Unit(
                kind=unit_raw.get("kind", "row"),
                column=_unit_column(unit_raw.get("column")),
                max_rows=unit_raw.get("max_rows", 1),
            )
        )

    post_raw = bag.mapping(top.get("postprocess"), "postprocess")
    postprocess = None
    if post_raw is not None:
        bag.keys(post_raw, POSTPROCESS_KEYS, "postprocess")
        postprocess = bag.build(
            lambda: Postprocess(
                clamp=_clamp(post_raw.get("clamp")),
                nonnegative=_bool(post_raw, "nonnegative", True),
                integer=_bool(post_raw, "integer", True),
                consistent=_bool(post_raw, "consistent", False),
            )
        )
    data = top.get("data")
    if data is not None and not isinstance(data, str):
        bag.problems.append(f"data must be a file path, got {quote(data)}.")
    dataset = top.get("dataset")
    if dataset is not None and not _is_dataset_name(dataset):
        bag.problems.append(DATASET_NAME_RULE)

    if bag.problems and schema is not None:
        bag.problems.extend(unknown_column_problems(tuple(tables), schema.names))
    if bag.problems or schema is None or budget is None or unit is None or postprocess is None:
        raise PlanError.from_problems(bag.problems or ["The plan could not be read."])
    return Plan(
        schema=schema,
        tables=tuple(tables),
        budget=budget,
        unit=unit,
        neighbors=top.get("neighbors", "add_remove"),
        postprocess=postprocess,
        data=data,
        dataset=dataset,
        base_dir=base_dir,
    )


DATASET_NAME_RULE = (
    "dataset must be a name of 1 to 200 printable characters on one line "
    "(e.g. dataset: census-2020): the ledger account the release is charged to."
)


def _is_dataset_name(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= 200
        and value.isprintable()
        and bool(value.strip())
    )


# --- serialising ----------------------------------------------------------------------------


def _column_to_dict(column: Column) -> dict[str, Any]:
    if isinstance(column, NumericColumn):
        out: dict[str, Any] = {"kind": "numeric", "bins": list(column.edges)}
    else:
        out = {"kind": "categorical", "domain": list(column.domain)}
        if column.other is not None:
            out["other"] = column.other
        if column.parent is not None:
            out["parent"] = column.parent
            out["parent_map"] = dict(column.parent_map or {})
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
    return out


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
    out["columns"] = {c.name: _column_to_dict(c) for c in plan.schema.columns}
    out["tables"] = [_table_to_dict(spec) for spec in plan.tables]
    out["budget"] = {
        key: getattr(budget, key) for key in BUDGET_KEYS if getattr(budget, key) is not None
    }
    post = plan.postprocess
    out["postprocess"] = {
        "clamp": list(post.clamp),
        "nonnegative": post.nonnegative,
        "integer": post.integer,
        "consistent": post.consistent,
    }
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
    """Parse plan text; a syntax error is a `PlanError` with the line it is on.

    YAML aliases (``*name``) are refused: a few hundred bytes of nested aliases expand to
    billions of values (the "billion laughs"), and a plan never needs them.
    """
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
    return parse_plan(raw, base_dir, max_cells=max_cells)


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
    """PyYAML's SafeLoader, also reading 1e-10 as a number (YAML 1.1 wants 1.0e-10).

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
