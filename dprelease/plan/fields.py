"""The parts of a plan mapping, one at a time: the allowed keys of each section, and the
parsers of a column, a table, a domain, bins, the unit column and the clamp. Problems go to a
`Collector` so that `parse_plan` reports all of them at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dprelease.errors import DPReleaseError, PlanError, quote
from dprelease.plan.model import Budget, Postprocess, SyntheticShare, did_you_mean, keys_of
from dprelease.plan.schema import (
    COLUMN_KINDS,
    DECLARED_SOURCES,
    CategoricalColumn,
    Column,
    NumericColumn,
)
from dprelease.plan.stat_spec import parse_discover, parse_stat
from dprelease.plan.statistic import DISCOVERED, StatisticTable
from dprelease.plan.survey_weight import parse_survey_weight
from dprelease.plan.table_spec import TableSpec, Target, Unit
from dprelease.plan.values_text import format_number, is_number

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
    "strategy",  # also accepted as budget.strategy (where saved plans write it)
    "postprocess",
    "structural_zeros",  # issue 27: impossible cells
)
COLUMN_KEYS = (
    "kind",
    "domain",
    "other",
    "bins",
    "parent",
    "parent_map",
    "domain_source",
    "labels",
)
TABLE_KEYS = (*keys_of(TableSpec), "stat")  # stat: a table of statistics (issue 16)
BUDGET_KEYS = keys_of(Budget)
POSTPROCESS_KEYS = keys_of(Postprocess)
UNIT_KEYS = keys_of(Unit)
TARGET_KEYS = keys_of(Target)


class Collector:
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


def given(raw: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The `keys` the plan writes; the value type's own defaults fill in the others."""
    return {key: raw[key] for key in keys if key in raw}


def number_or_none(raw: Mapping[str, Any], key: str, where: str) -> Any:
    value = raw.get(key)
    if value is not None and not is_number(value):
        raise PlanError(f"{where}.{key} must be a number, got {quote(value)}.")
    return value


def flag(raw: Mapping[str, Any], key: str) -> bool:
    value = raw[key]
    if not isinstance(value, bool):
        raise PlanError(f"postprocess.{key} must be true or false, got {quote(value)}.")
    return value


def parse_synthetic(value: object) -> bool | SyntheticShare:
    """`postprocess.synthetic`: true/false, or {budget_share: S} (issue 38.6)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Mapping) and set(value) == {"budget_share"}:
        return SyntheticShare(value["budget_share"])
    raise PlanError(
        "postprocess.synthetic must be true, false or {budget_share: S} with 0 < S < 1, "
        f"got {quote(value)}."
    )


def parse_domain(raw: object, where: str) -> tuple[Any, ...]:
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
    if all(is_number(value) for value in raw):
        return tuple(raw)
    # A domain with any text is matched as text: its numbers are their text ('01', '06', 13
    # -> '13'), so that the plan is saved with one type and reads back the same.
    return tuple(as_text(value) for value in raw)


def as_text(value: Any) -> Any:
    """A number as the text the plan wrote (13 -> "13"); text and anything else unchanged."""
    return format_number(value) if is_number(value) else value


def parse_value_labels(raw: object, where: str) -> dict[str, str] | None:
    """A column's `labels: {code: label}`; a code written as a number is taken as its text
    (YAML reads an unquoted 1 as a number), so that it matches the domain's own text."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise PlanError(f"{where}: labels must map codes to their labels, e.g. {{1: Male}}.")
    labels: dict[str, str] = {}
    for code, label in raw.items():
        if not (isinstance(code, str) or is_number(code)):
            raise PlanError(
                f"{where}: a labelled code must be text or a number, got {quote(code)}."
            )
        labels[code if isinstance(code, str) else format_number(code)] = label
    return labels or None


def parse_bin_labels(raw: object, where: str) -> tuple[str, ...] | None:
    """A numeric column's `labels: [one per bin, in bin order]` (their count and texts are
    checked by the column, which knows how many bins it has)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise PlanError(
            f"{where}: labels of bins are a list, one label per bin in bin order, "
            "e.g. [0–17, 18–64, 65 and over]."
        )
    return tuple(raw)


def parse_bins(raw: object, where: str) -> tuple[int | float, ...]:
    if isinstance(raw, Mapping):
        if set(raw) != {"start", "stop", "width"}:
            raise PlanError(f"{where}: bins are a list of edges or {{start, stop, width}}.")
        start, stop, width = raw["start"], raw["stop"], raw["width"]
        if not all(is_number(v) for v in (start, stop, width)) or width <= 0 or stop <= start:
            raise PlanError(f"{where}: bins need numbers with start < stop and width > 0.")
        if stop - start > 1_000_000 * width:  # compared, not divided: 1e300 / 1e-300 is inf
            raise PlanError(f"{where}: at most 1,000,000 bins are allowed.")
        count = int((stop - start) // width)
        edges: list[int | float] = [start + i * width for i in range(count + 1)]
        if isinstance(width, float) or isinstance(start, float):
            edges = [round(e, 12) for e in edges]
        if edges[-1] < stop:
            edges.append(stop)
        return tuple(edges)
    if not isinstance(raw, list):
        raise PlanError(f"{where}: bins must be a list of edges, e.g. [0, 18, 65, 120].")
    return tuple(raw)


def parse_column(name: str, raw: Mapping[str, Any], bag: Collector) -> Column | None:
    where = f"column {quote(name)}"
    bag.keys(raw, COLUMN_KEYS, where)
    kind = raw.get("kind", "categorical" if "domain" in raw else "numeric")
    source = raw.get("domain_source", "plan")
    if source not in DECLARED_SOURCES:
        allowed = ", ".join(quote(s) for s in DECLARED_SOURCES)
        bag.problems.append(
            f"{where}: domain_source must be one of {allowed}, got {quote(source)}."
        )
        return None
    if kind == "categorical":
        if "bins" in raw:
            bag.problems.append(f"{where} is categorical; `bins` is for numeric columns.")
        if discover_spec(raw) is not None:
            return _discovered_column(name, raw, bag)
        parent_map = raw.get("parent_map")
        if parent_map is not None and not isinstance(parent_map, Mapping):
            bag.problems.append(f"{where}: parent_map must map child values to parent values.")
            return None
        return bag.build(lambda: _categorical(name, raw, parent_map, source))
    if kind == "numeric":
        for key in ("domain", "other", "parent", "parent_map"):
            if key in raw:
                bag.problems.append(f"{where} is numeric; `{key}` is for categorical columns.")
        if "bins" not in raw:
            bag.problems.append(f"{where} is numeric and needs `bins` (a list of edges).")
            return None
        return bag.build(
            lambda: NumericColumn(
                name=name,
                edges=parse_bins(raw["bins"], f"Column {quote(name)}"),
                domain_source=source,
                bin_labels=parse_bin_labels(raw.get("labels"), f"Column {quote(name)}"),
            )
        )
    bag.problems.append(
        f"{where}: kind must be {' or '.join(map(quote, COLUMN_KINDS))}, got {quote(kind)}."
        + did_you_mean(str(kind), list(COLUMN_KINDS))
    )
    return None


def _categorical(
    name: str, raw: Mapping[str, Any], parent_map: Mapping[Any, Any] | None, source: Any
) -> CategoricalColumn:
    domain = parse_domain(raw.get("domain"), f"Column {quote(name)}")
    other = raw.get("other")
    if other is not None and not all(is_number(v) for v in domain):
        other = as_text(other)  # a text domain's `other: 13` names its code '13'
    return CategoricalColumn(
        name=name,
        domain=domain,
        other=other,
        parent=raw.get("parent"),
        parent_map=({str(k): str(v) for k, v in parent_map.items()} if parent_map else None),
        domain_source=source,
        value_labels=parse_value_labels(raw.get("labels"), f"Column {quote(name)}"),
    )


def discover_spec(raw: Mapping[str, Any]) -> object | None:
    """The raw `discover:` of a column's `domain: {discover: {...}}`, or None."""
    domain = raw.get("domain")
    return domain.get("discover") if isinstance(domain, Mapping) and "discover" in domain else None


def _discovered_column(name: str, raw: Mapping[str, Any], bag: Collector) -> Column | None:
    """A categorical column whose domain the release discovers (empty until then)."""
    where = f"column {quote(name)}"
    domain = raw["domain"]
    if set(domain) != {"discover"}:
        bag.problems.append(f"{where}: domain {{discover: ...}} takes no other keys.")
    for key in ("other", "parent", "parent_map"):
        if key in raw:
            bag.problems.append(f"{where}: a discovered domain cannot have `{key}`.")
    if bag.build(lambda: parse_discover(domain["discover"], name)) is None:
        return None
    return bag.build(lambda: CategoricalColumn(name=name, domain=(), domain_source=DISCOVERED))


def parse_table(raw: object, index: int, bag: Collector) -> TableSpec | StatisticTable | None:
    table = bag.mapping(raw, f"tables[{index}]")
    if table is None:
        return None
    where = f"table {quote(table.get('name', index))}"
    bag.keys(table, TABLE_KEYS, where)
    by = table.get("by", [])
    if isinstance(by, str):
        by = [by]
    if not isinstance(by, list) or not all(is_name(c) for c in by):
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
    spec = bag.build(
        lambda: TableSpec(
            name=table.get("name", f"table_{index + 1}"),
            by=tuple(by),
            **given(table, "weight", "invariant"),
            survey_weight=parse_survey_weight(table.get("survey_weight"), where),
            epsilon=number_or_none(table, "epsilon", where),
            rho=number_or_none(table, "rho", where),
            delta=number_or_none(table, "delta", where),
            target=(
                Target(
                    moe=number_or_none(target_raw, "moe", where + ".target"),
                    moe_table=number_or_none(target_raw, "moe_table", where + ".target"),
                )
                if target_raw
                else None
            ),
        )
    )
    if spec is None or "stat" not in table:
        return spec
    if spec.invariant:
        bag.problems.append(
            f"{where}: a statistic cannot be invariant; invariant is for tables of counts."
        )
        return None
    if spec.survey_weight is not None:
        bag.problems.append(
            f"{where}: a statistic cannot have a survey_weight; survey_weight is for tables of "
            "counts (they become weighted totals)."
        )
        return None
    return bag.build(lambda: StatisticTable(spec, parse_stat(table["stat"], spec.name)))


def is_name(value: object) -> bool:
    """Column names are text; a whole number is taken as its text, as YAML keys are."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse_unit_column(raw: object) -> Any:
    """The unit id column's name as text (a whole number as its text); anything else is refused."""
    if raw is None or isinstance(raw, str):
        return raw
    if is_name(raw):
        return str(raw)
    raise PlanError(f"unit.column must be a column name, got {quote(raw)}.")


def parse_clamp(raw: object) -> tuple[Any, Any]:
    if raw is None:
        return (None, None)
    if not isinstance(raw, list) or len(raw) != 2:
        raise PlanError("postprocess.clamp must be [lower, upper], each a number or null.")
    return (raw[0], raw[1])
