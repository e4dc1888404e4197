"""Edits to a draft plan, kept in the plan file's own mapping (what `parse_plan` reads).

The dashboard keeps the user's plan as this mapping so that a half-finished plan (no tables
yet, a column without a domain) survives every rerun, and saving and loading are the CLI's
format. Every function returns a new mapping and never changes its input.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dprelease.errors import PlanError, quote
from dprelease.plan.model import PLAN_VERSION, Budget, Plan, Postprocess, default_of
from dprelease.plan.table_spec import TABLE_NAME, Unit

PlanDict = dict[str, Any]
_INTEGER = re.compile(r"-?[1-9][0-9]*|0")  # canonical whole numbers only: "01" stays text
MAX_DOMAIN_FROM_DATA = 10_000


def empty_plan(epsilon: float = 1.0) -> PlanDict:
    """A plan with no columns or tables yet and a sensible default budget."""
    post = Postprocess().to_dict()  # written out, so that a saved plan says what runs
    return {
        "version": PLAN_VERSION,
        "unit": {"kind": default_of(Unit, "kind")},
        "neighbors": default_of(Plan, "neighbors"),
        "columns": {},
        "tables": [],
        "budget": {
            "accounting": default_of(Budget, "accounting"),
            "epsilon": epsilon,
            "delta": 1e-10,
        },
        "postprocess": post,
    }


def _copy(plan: PlanDict) -> PlanDict:
    out = copy.deepcopy(plan)
    out.setdefault("columns", {})
    out.setdefault("tables", [])
    out.setdefault("budget", {})
    return out


# --- domains --------------------------------------------------------------------------------


def domain_values(texts: Iterable[str]) -> list[str | int]:
    """A domain's values from their texts, one type for the whole column: whole numbers when
    every value is a canonical whole number, else all text as written ("01", "06", "13"), so
    that a saved plan never mixes '01' and 13."""
    stripped = [text.strip() for text in texts]
    if all(_INTEGER.fullmatch(text) for text in stripped):
        return [int(text) for text in stripped]
    return list[str | int](stripped)


def parse_domain_text(text: str) -> list[str | int]:
    """Values pasted one per line or separated by commas; blanks dropped, order kept."""
    parts = re.split(r"[\n,;\t]", text)
    values = domain_values(p for p in parts if p.strip())
    if not values:
        raise PlanError("The domain is empty: paste at least one value (one per line).")
    return values


def parse_labels_text(text: str) -> dict[str, str] | None:
    """Labels typed one per line as `code = label` (blank lines skipped); None if none."""
    labels: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        code, sep, label = line.partition("=")
        if not sep or not code.strip() or not label.strip():
            raise PlanError(f"Label line {number} must read `code = label` (e.g. 01 = Alabama).")
        labels[code.strip()] = label.strip()
    return labels or None


def labels_text(labels: dict[str, str] | None) -> str:
    """The inverse of `parse_labels_text`: one `code = label` line per labelled code."""
    return "\n".join(f"{code} = {label}" for code, label in (labels or {}).items())


def kept_labels(
    labels: dict[str, str] | None, domain: Sequence[str | int]
) -> dict[str, str] | None:
    """The labels of the codes still in an edited domain (a domain edit keeps its labels)."""
    codes = {str(value) for value in domain}
    kept = {code: label for code, label in (labels or {}).items() if code in codes}
    return kept or None


def bins_from_data(values: np.ndarray, name: str, bins: int = 10) -> dict[str, int | float]:
    """DISCLOSIVE: equal-width bins spanning the data's smallest and largest value."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise PlanError(f"Column {quote(name)} has no numbers to take bins from.")
    low, high = float(np.floor(finite.min())), float(np.ceil(finite.max()))
    width = max((high - low) / bins, 1.0) if high > low else 1.0
    stop = low + width * bins if high > low else low + 1
    return {"start": _number(low), "stop": _number(max(stop, high)), "width": _number(width)}


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def set_categorical(
    plan: PlanDict,
    name: str,
    domain: Sequence[str | int],
    *,
    other: str | int | None = None,
    parent: str | None = None,
    parent_map: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    from_data: bool = False,
    from_value_labels: bool = False,
) -> PlanDict:
    """Declare a categorical column; `labels` are the codebook's {code text: label}.

    `from_data`: the domain was read from the records (a disclosure, reported as such);
    `from_value_labels`: from the file's declared value labels (public, the producer's)."""
    out = _copy(plan)
    text = any(isinstance(value, str) for value in domain)  # one type: text if any is text
    column: dict[str, Any] = {
        "kind": "categorical",
        "domain": [str(value) for value in domain] if text else list(domain),
    }
    if other not in (None, ""):
        column["other"] = str(other) if text else other
    if parent:
        column["parent"] = parent
        column["parent_map"] = dict(parent_map or {})
    if labels:
        column["labels"] = dict(labels)
    if from_data:
        column["domain_source"] = "data"
    elif from_value_labels:
        column["domain_source"] = "value_labels"
    out["columns"][name] = column
    return out


def set_numeric(
    plan: PlanDict,
    name: str,
    bins: list[float] | dict[str, float],
    *,
    labels: Sequence[str] | None = None,
    from_data: bool = False,
) -> PlanDict:
    """Bins are a list of edges or {start, stop, width}; `labels` one per bin, in bin order
    (checked against the number of bins by `check_column`)."""
    out = _copy(plan)
    column: dict[str, Any] = {"kind": "numeric", "bins": bins}
    if labels:
        column["labels"] = list(labels)
    if from_data:
        column["domain_source"] = "data"
    out["columns"][name] = column
    return out


def parse_edges(text: str) -> list[int | float]:
    """Bin edges typed as '0, 18, 65, 120'."""
    edges: list[int | float] = []
    for part in re.split(r"[\s,;]+", text.strip()):
        if not part:
            continue
        try:
            number = float(part)
        except ValueError:
            raise PlanError(
                f"Bin edge {quote(part)} is not a number; type edges like 0, 18, 65."
            ) from None
        edges.append(_number(number))
    if len(edges) < 2:
        raise PlanError("Give at least two bin edges, e.g. 0, 18, 65, 120.")
    return edges


def ignore_column(plan: PlanDict, name: str) -> PlanDict:
    """Drop a column from the plan, and the tables that use it."""
    out = _copy(plan)
    out["columns"].pop(name, None)
    out["tables"] = [t for t in out["tables"] if name not in t.get("by", [])]
    for column in out["columns"].values():
        if column.get("parent") == name:
            column.pop("parent", None)
            column.pop("parent_map", None)
    return out


# --- tables ---------------------------------------------------------------------------------


def table_name(by: Sequence[str]) -> str:
    """The default name of a table: 'total', 'sex' or 'age_by_sex'."""
    raw = "_by_".join(by) if by else "total"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", raw)[:100]
    return name if TABLE_NAME.match(name) else "table"


def _unique_name(name: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if name not in used:
        return name
    for number in itertools.count(2):
        candidate = f"{name[:95]}_{number}"
        if candidate not in used:
            return candidate
    raise AssertionError("unreachable")


def add_table(plan: PlanDict, by: Sequence[str], name: str | None = None) -> PlanDict:
    """Add a histogram or marginal; a table over the same columns is not added twice."""
    out = _copy(plan)
    by = list(by)
    unknown = [c for c in by if c not in out["columns"]]
    if unknown:
        raise PlanError(
            f"Columns {', '.join(unknown)} have no domain yet; declare them on the Data page."
        )
    if len(set(by)) != len(by):
        raise PlanError("A table may use each column once.")
    if name is None and any(sorted(t.get("by", [])) == sorted(by) for t in out["tables"]):
        return out
    taken = [t.get("name", "") for t in out["tables"]]
    if name is not None and name in taken:
        raise PlanError(f"There is already a table called {quote(name)}; pick another name.")
    out["tables"].append({"name": name or _unique_name(table_name(by), taken), "by": by})
    return out


def add_every_k_way(plan: PlanDict, columns: Sequence[str], k: int) -> PlanDict:
    """Every k-way table of `columns` (skipping those already in the plan)."""
    if not 1 <= k <= len(columns):
        raise PlanError(f"Pick at least {k} columns for every {k}-way table.")
    out = plan
    for combo in itertools.combinations(columns, k):
        out = add_table(out, combo)
    return out


def remove_table(plan: PlanDict, name: str) -> PlanDict:
    out = _copy(plan)
    out["tables"] = [t for t in out["tables"] if t.get("name") != name]
    return out


def update_table(plan: PlanDict, name: str, /, **changes: Any) -> PlanDict:
    """Change a table's fields (`name=` renames it); None removes a field (e.g. a lock)."""
    out = _copy(plan)
    taken = [t.get("name") for t in out["tables"] if t.get("name") != name]
    new_name = changes.get("name")
    if new_name is not None and new_name in taken:
        raise PlanError(f"There is already a table called {quote(new_name)}; pick another name.")
    for table in out["tables"]:
        if table.get("name") == name:
            for key, value in changes.items():
                if value is None:
                    table.pop(key, None)
                else:
                    table[key] = value
            return out
    raise PlanError(f"The plan has no table {quote(name)}.")


# --- budget and post-processing -------------------------------------------------------------


def set_budget(plan: PlanDict, **changes: Any) -> PlanDict:
    """Change budget fields; None removes one (e.g. rho when ε is given).

    Only the budget is copied: the new plan shares every other part with `plan` (no edit
    changes a plan in place), so a what-if does not copy a 3,000-code domain, and the
    dashboard sees by identity that only the budget moved (`ui/state.py`)."""
    out = dict(plan)
    out["budget"] = dict(plan.get("budget") or {})
    for key, value in changes.items():
        if value is None:
            out["budget"].pop(key, None)
        else:
            out["budget"][key] = value
    return out


def set_postprocess(plan: PlanDict, **changes: Any) -> PlanDict:
    out = _copy(plan)
    post = out.setdefault("postprocess", {})
    post.update(changes)
    return out


def set_unit(plan: PlanDict, column: str | None, max_rows: int = 1) -> PlanDict:
    """Rows are the unit (column None), or each value of an id column, capped at max_rows."""
    out = _copy(plan)
    out["unit"] = (
        {"kind": default_of(Unit, "kind")}
        if column is None
        else {
            "kind": "id",
            "column": column,
            "max_rows": max_rows,
        }
    )
    return out


def check_column(plan: PlanDict, name: str) -> None:
    """Raise PlanError if column `name` (with its chain of parents) is not a valid declaration."""
    from dprelease.plan.parse import parse_schema  # parse imports the plan model; keep it lazy

    columns = plan.get("columns", {})
    if name not in columns:
        raise PlanError(f"Unknown column {quote(name)}: declare it first.")
    chain: dict[str, Any] = {}
    current: str | None = name
    while current is not None and current in columns and current not in chain:
        chain[current] = columns[current]
        current = columns[current].get("parent")
    parse_schema(chain)


def _grid_number(value: Any) -> float | None:
    """A grid cell as a number; empty cells (None or NaN) are None."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def apply_table_edits(plan: PlanDict, rows: Sequence[dict[str, Any]], lock_unit: str) -> PlanDict:
    """The Tables page's edited grid as plan edits: each row (in the plan's table order) renames,
    reweights, locks `lock_unit` (ε or ρ), sets one accuracy target, or removes its table."""
    originals = [t.get("name") for t in plan.get("tables", [])]
    if len(rows) != len(originals):
        raise PlanError("Tables cannot be added in the grid; use Add table above.")
    out = plan
    for original, row in zip(originals, rows, strict=True):
        if row.get("remove"):
            out = remove_table(out, original)
            continue
        target_cell = _grid_number(row.get("target MoE per cell"))
        target_table = _grid_number(row.get("target MoE whole table"))
        if target_cell is not None and target_table is not None:
            raise PlanError(f"Table {quote(original)}: give one accuracy target, not both.")
        target = (
            {"moe": target_cell}
            if target_cell is not None
            else {"moe_table": target_table}
            if target_table is not None
            else None
        )
        weight = _grid_number(row.get("weight"))
        new_name = str(row.get("name") or "").strip() or original
        changes: dict[str, Any] = {
            lock_unit: _grid_number(row.get(f"locked {lock_unit}")),
            "weight": None if weight in (None, 1.0) else weight,
            "target": target,
            # issue 27: exact counts, never a default; ticked only by the user
            "invariant": True if row.get("invariant (exact, no noise)") else None,
        }
        if new_name != original:
            changes["name"] = new_name
        out = update_table(out, original, **changes)
    return out
