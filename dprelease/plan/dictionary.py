"""A whole data dictionary at once (issue 37, point 7): every column's codes, labels, bins and
parent from one published file, shown before it is applied.

Two forms are read:

- JSON: ``{COLUMN: {"description": TEXT, "values": {CODE: LABEL, ...}, "parent": COLUMN,
  "parents": {CODE: PARENT_CODE}, "bins": [EDGES], "bin_labels": [LABEL, ...]}}`` (every key
  optional but one of `values` and `bins`); a list under `values` gives codes without labels;
- a long CSV with a header ``column,value,label[,parent]``: one row per code, in domain order;
  `parent` holds the parent's code, and the parent column is the dictionary's column whose
  codes hold every one of them.

A dictionary is public metadata (the producer's codebook), not values found in the records: a
column takes its domain from it as if typed in the plan. A column the data do not have is left
out and said; descriptions are shown, not stored (the plan has no field for them).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.limits import MAX_CELLS, MAX_VALUE_LABEL
from dprelease.plan.edit import PlanDict, domain_values, set_categorical, set_numeric

MAX_DICTIONARY_BYTES = 20_000_000
"""The largest dictionary read (20 MB): a census codebook of a few thousand codes is ~1 MB."""


@dataclass(frozen=True)
class Entry:
    """One column of a dictionary: codes with labels (a categorical column) or bins."""

    name: str
    description: str = ""
    codes: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    parent: str | None = None
    parents: Mapping[str, str] = field(default_factory=dict)
    bins: tuple[float, ...] = ()
    bin_labels: tuple[str, ...] = ()

    def summary(self) -> str:
        """What applying it sets, in words (the preview's line)."""
        if self.bins:
            text = f"numeric, {len(self.bins) - 1} bins"
            return text + (", labelled" if self.bin_labels else "")
        text = f"categorical, {len(self.codes):,} codes, {len(self.labels):,} labelled"
        return text + (f", parent {self.parent}" if self.parent else "")


@dataclass(frozen=True)
class Dictionary:
    entries: tuple[Entry, ...]

    def preview(self, present: Collection[str] | None = None) -> list[dict[str, str]]:
        """One row per column: what it would set, or why it is left out."""
        return [
            {
                "column": e.name,
                "sets": e.summary() if present is None or e.name in present else "left out",
                "description": e.description,
                "note": "" if present is None or e.name in present else "not in the data",
            }
            for e in self.entries
        ]

    def apply(self, plan: PlanDict, present: Collection[str] | None = None) -> PlanDict:
        """The plan with every column of the dictionary (that the data have) declared by it."""
        for entry in self.entries:
            if present is not None and entry.name not in present:
                continue
            if entry.bins:
                bin_labels = list(entry.bin_labels) or None
                edges = [int(b) if b.is_integer() else b for b in entry.bins]
                plan = set_numeric(plan, entry.name, edges, labels=bin_labels)
                continue
            labels = {code: label for code, label in entry.labels.items() if label}
            parent_map = dict(entry.parents) if entry.parent else None
            plan = set_categorical(
                plan,
                entry.name,
                domain_values(entry.codes),
                parent=entry.parent,
                parent_map=parent_map,
                labels=labels or None,
            )
        return plan


def read_dictionary(data: bytes, filename: str) -> Dictionary:
    """A dictionary file (JSON, or a long CSV), checked; a one-line PlanError otherwise."""
    if len(data) > MAX_DICTIONARY_BYTES:
        raise PlanError(
            f"The dictionary is {len(data) / 1e6:,.0f} MB; at most "
            f"{MAX_DICTIONARY_BYTES // 1_000_000} MB is read."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlanError("The dictionary is not UTF-8 text; save it as UTF-8.") from None
    if filename.lower().endswith(".json") or text.lstrip().startswith("{"):
        entries = _from_json(text)
    else:
        entries = _from_long_csv(text)
    if not entries:
        raise PlanError("The dictionary declares no column.")
    cells = sum(len(e.codes) for e in entries)
    if cells > MAX_CELLS:
        raise PlanError(f"The dictionary declares {cells:,} codes; at most {MAX_CELLS:,}.")
    return Dictionary(tuple(entries))


def _from_json(text: str) -> list[Entry]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanError(f"The dictionary is not valid JSON (line {error.lineno}).") from None
    if not isinstance(raw, dict):
        raise PlanError("A JSON dictionary is an object: {COLUMN: {values: {CODE: LABEL}}}.")
    return [_json_entry(str(name), spec) for name, spec in raw.items()]


def _json_entry(name: str, spec: Any) -> Entry:
    where = f"Dictionary column {quote(name)}"
    if not isinstance(spec, dict):
        raise PlanError(f"{where} must be an object with `values` or `bins`.")
    unknown = set(spec) - {"description", "values", "parent", "parents", "bins", "bin_labels"}
    if unknown:
        raise PlanError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}.")
    values, bins = spec.get("values"), spec.get("bins")
    if (values is None) == (bins is None):
        raise PlanError(f"{where} needs exactly one of `values` (codes) and `bins` (edges).")
    description = _text(spec.get("description", ""), where)
    if bins is not None:
        if not isinstance(bins, list) or len(bins) < 2:
            raise PlanError(f"{where}: `bins` is a list of at least two edges.")
        try:
            edges = tuple(float(b) for b in bins)
        except (TypeError, ValueError):
            raise PlanError(f"{where}: every bin edge must be a number.") from None
        bin_labels = tuple(_label(v, where) for v in spec.get("bin_labels") or [])
        return Entry(name, description, bins=edges, bin_labels=bin_labels)
    if isinstance(values, list):
        labels: dict[str, str] = {}
        codes = tuple(_code(v, where) for v in values)
    elif isinstance(values, dict):
        codes = tuple(_code(v, where) for v in values)
        labels = {_code(k, where): _label(v, where) for k, v in values.items()}
    else:
        raise PlanError(f"{where}: `values` is {{CODE: LABEL}} or a list of codes.")
    parents = spec.get("parents") or {}
    if not isinstance(parents, dict):
        raise PlanError(f"{where}: `parents` is {{CODE: PARENT_CODE}}.")
    parent = spec.get("parent")
    return _checked(
        Entry(
            name,
            description,
            codes,
            labels,
            None if parent is None else str(parent),
            {_code(k, where): _code(v, where) for k, v in parents.items()},
        )
    )


def _from_long_csv(text: str) -> list[Entry]:
    rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    if not rows:
        raise PlanError("The dictionary is empty.")
    header = [h.strip().lower() for h in rows[0]]
    if header[:2] != ["column", "value"]:
        raise PlanError(
            "A CSV dictionary starts with the header column,value,label[,parent] (one row per "
            f"code); this one starts {','.join(rows[0][:3])}."
        )
    label_at = header.index("label") if "label" in header else None
    parent_at = header.index("parent") if "parent" in header else None
    codes: dict[str, list[str]] = {}
    labels: dict[str, dict[str, str]] = {}
    parents: dict[str, dict[str, str]] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = [*row, "", "", ""]
        name, code = cells[0].strip(), cells[1].strip()
        if not name or not code:
            raise PlanError(f"Dictionary row {number} needs a column and a value.")
        where = f"Dictionary row {number}"
        codes.setdefault(name, []).append(_code(code, where))
        if label_at is not None and cells[label_at].strip():
            labels.setdefault(name, {})[code] = _label(cells[label_at].strip(), where)
        if parent_at is not None and cells[parent_at].strip():
            parents.setdefault(name, {})[code] = cells[parent_at].strip()
    entries = []
    for name, values in codes.items():
        parent = _parent_column(name, parents.get(name, {}), codes)
        entries.append(
            _checked(
                Entry(
                    name,
                    codes=tuple(values),
                    labels=labels.get(name, {}),
                    parent=parent,
                    parents=parents.get(name, {}) if parent else {},
                )
            )
        )
    return entries


def _parent_column(
    name: str, parents: Mapping[str, str], codes: Mapping[str, list[str]]
) -> str | None:
    """The dictionary's column whose codes hold every parent code of `name` (one, or none)."""
    if not parents:
        return None
    wanted = set(parents.values())
    found = [other for other, values in codes.items() if other != name and wanted <= set(values)]
    if len(found) != 1:
        raise PlanError(
            f"Dictionary column {quote(name)} has parent codes that "
            + ("no other column holds" if not found else f"{len(found)} columns hold")
            + "; give the parent column's codes in the same dictionary."
        )
    return found[0]


def _checked(entry: Entry) -> Entry:
    where = f"Dictionary column {quote(entry.name)}"
    if not entry.codes:
        raise PlanError(f"{where} lists no code.")
    if len(set(entry.codes)) != len(entry.codes):
        raise PlanError(f"{where} lists a code twice.")
    if entry.parent is not None:
        missing = [c for c in entry.codes if c not in entry.parents]
        if missing:
            raise PlanError(f"{where}: code {quote(missing[0])} has no parent code.")
    return entry


def _code(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise PlanError(f"{where}: a code must be text or a number, got {value!r}.")
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if not text.strip():
        raise PlanError(f"{where}: a code is empty.")
    return text.strip()


def _label(value: Any, where: str) -> str:
    text = _text(value, where)
    if len(text) > MAX_VALUE_LABEL:
        raise PlanError(f"{where}: a label is longer than {MAX_VALUE_LABEL} characters.")
    return text


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise PlanError(f"{where}: a label or description must be text, got {value!r}.")
    return " ".join(str(value).split())
