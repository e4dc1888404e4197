"""Columns and their public domains: categories, numeric bins, geography hierarchy.

A domain is public knowledge written in the plan, never read from the data (unless the user
chose so explicitly; `domain_source` then says ``"data"``). A domain filled from the data
file's declared value labels (the producer's codebook, not the records) says
``"value_labels"``. Each column knows how to turn data
values into codes 0..size-1 of its domain, with -1 for a row that is left out.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Literal

import numpy as np

from dprelease.errors import PlanError, quote
from dprelease.limits import MAX_VALUE_LABEL
from dprelease.plan.values_text import format_number, is_number, name_codes

DomainValue = str | int | float
DomainSource = Literal["plan", "data", "discovered", "value_labels"]  # discovered: issue 16
DECLARED_SOURCES = ("plan", "data", "value_labels")  # what a plan may write (issue 36: labels)

RESERVED_NAME = "count"  # the released tables' count column
LABEL_SUFFIX = "_label"  # the released tables' column of value labels after a code column
MISSING_CODE = -1  # a row whose value is outside the domain and has no `other` label
COLUMN_KINDS = ("categorical", "numeric")  # a plan column's `kind` (issue 36: listed once)


def with_label(column: Column, code: str) -> str:
    """What the dashboard shows for a code: "label (code)", or the code if unlabelled."""
    return f"{label} ({code})" if (label := column.label_of(code)) else code


@dataclass(frozen=True)
class CategoricalColumn:
    """A column whose released cells are the values of a public list, in list order.

    A domain of numbers is matched to the data by value ("1.0" and "1" are both 1); a domain
    of text is matched as text, so "01" and "1" stay different codes (FIPS, PUMA).
    `value_labels` (the plan's `labels:`) gives some codes a public meaning from the codebook,
    {code text: label}; it changes no count, only what the tables and charts show.
    """

    name: str
    domain: tuple[DomainValue, ...]
    other: DomainValue | None = None
    parent: str | None = None
    parent_map: Mapping[str, str] | None = None
    domain_source: DomainSource = "plan"
    value_labels: Mapping[str, str] | None = None
    kind: Literal["categorical"] = field(default="categorical", init=False)

    def __post_init__(self) -> None:
        where = f"Column {quote(self.name)}"
        if not self.domain and self.domain_source != "discovered":  # filled at release
            raise PlanError(f"{where} has an empty domain: list at least one value.")
        if self.numeric_domain:
            if not all(math.isfinite(float(v)) for v in self.domain):
                raise PlanError(f"{where}: domain values must be finite numbers or text.")
            values = [float(v) for v in self.domain]
            if len(set(values)) != len(values):
                raise PlanError(
                    f"{where} has domain values that are equal as numbers (e.g. 1 and 1.0); "
                    "a numeric domain is matched by value, so each number may appear once."
                )
        seen: set[str] = set()
        duplicates = []
        for label in self.labels:
            if label in seen:
                duplicates.append(label)
            seen.add(label)
        if duplicates:
            raise PlanError(
                f"{where} has duplicate domain values: {', '.join(sorted(set(duplicates)))}; "
                "each value may appear once."
            )
        if self.other is not None and self._label(self.other) not in seen:
            raise PlanError(
                f"{where}: the other label {quote(self.other)} is not in its domain; "
                "add it to the domain or remove `other`."
            )
        if self.parent is not None and self.parent == self.name:
            raise PlanError(f"{where} cannot be its own parent.")
        if self.parent is not None and self.parent_map is None:
            raise PlanError(
                f"{where} has parent {quote(self.parent)} but no parent_map; "
                "give parent_map: {child value: parent value}."
            )
        if self.parent_map is not None and self.parent is None:
            raise PlanError(f"{where} has a parent_map but no parent column.")
        if self.parent_map is not None:
            missing = [label for label in self.labels if label not in self.parent_map]
            if missing:
                shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                raise PlanError(
                    f"{where}: parent_map misses {len(missing)} domain value(s) ({shown}); "
                    "every value needs a parent."
                )
            extra = [key for key in self.parent_map if key not in seen]
            if extra:
                shown = ", ".join(extra[:5]) + (" ..." if len(extra) > 5 else "")
                raise PlanError(f"{where}: parent_map names values not in the domain ({shown}).")
        self._check_value_labels(where, seen)

    def _check_value_labels(self, where: str, codes: set[str]) -> None:
        """Every labelled code is in the domain; every label is one short printable line."""
        if self.value_labels is None:
            return
        unknown = [code for code in self.value_labels if code not in codes]
        if unknown:
            shown = ", ".join(quote(c) for c in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise PlanError(
                f"{where}: labels name {len(unknown)} code(s) not in its domain ({shown}); "
                "label only domain values, written as in the domain (quote codes like '01')."
            )
        for code, label in self.value_labels.items():
            if not isinstance(label, str) or not label.strip():
                raise PlanError(
                    f"{where}: the label of code {quote(code)} must be non-empty text, got "
                    f"{quote(label)} (quote labels that look like numbers)."
                )
            if len(label) > MAX_VALUE_LABEL or not label.isprintable():
                raise PlanError(
                    f"{where}: the label of code {quote(code)} must be one printable line of at "
                    f"most {MAX_VALUE_LABEL} characters."
                )

    def label_of(self, code: str) -> str:
        """The codebook label of a code's text, or "" when the plan gives it none."""
        return (self.value_labels or {}).get(code, "")

    @property
    def display_labels(self) -> tuple[str, ...]:
        """`display` of every code, in domain order."""
        return tuple(with_label(self, code) for code in self.labels)

    @property
    def numeric_domain(self) -> bool:
        """Whether the domain is all numbers (matched by value) rather than text."""
        return all(is_number(v) for v in self.domain)

    @staticmethod
    def _label(value: DomainValue) -> str:
        return value if isinstance(value, str) else format_number(value)

    @property
    def labels(self) -> tuple[str, ...]:
        """The released cell labels, in domain order."""
        return tuple(self._label(v) for v in self.domain)

    @property
    def size(self) -> int:
        return len(self.domain)

    @property
    def other_code(self) -> int:
        """Code of the `other` label, or -1 when values outside the domain are left out."""
        if self.other is None:
            return MISSING_CODE
        return self.labels.index(self._label(self.other))

    def codes_for_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Domain codes for distinct data texts: the code, the other code, or -1.

        Called on the distinct values of a column (its dictionary), not on every row.
        """
        other = self.other_code
        if self.numeric_domain:
            by_value = {float(v): code for code, v in enumerate(self.domain)}
            codes = []
            for text in texts:
                try:
                    value = float(text)
                except (TypeError, ValueError):
                    codes.append(other)
                    continue
                codes.append(by_value.get(value, other))
            return np.asarray(codes, dtype=np.int32)
        by_text = {label: code for code, label in enumerate(self.labels)}
        return np.asarray([by_text.get(t, other) for t in texts], dtype=np.int32)


@dataclass(frozen=True)
class NumericColumn:
    """A numeric column released as bins: half-open [a, b), the last one closed [a, b].

    Values below the first edge or above the last are clamped into the first/last bin;
    missing or non-numeric values leave the row out.
    """

    name: str
    edges: tuple[int | float, ...]
    kind: Literal["numeric"] = field(default="numeric", init=False)
    domain_source: DomainSource = "plan"
    bin_labels: tuple[str, ...] | None = None  # the plan's `labels: [one per bin]`

    def __post_init__(self) -> None:
        where = f"Column {quote(self.name)}"
        if len(self.edges) < 2:
            raise PlanError(f"{where} needs at least two bin edges (one bin).")
        if not all(is_number(e) and math.isfinite(float(e)) for e in self.edges):
            raise PlanError(f"{where}: bin edges must be finite numbers.")
        if any(b <= a for a, b in zip(self.edges, self.edges[1:], strict=False)):
            raise PlanError(f"{where}: bin edges must be strictly increasing.")
        if self.bin_labels is not None:
            self._check_bin_labels(where, self.bin_labels)

    def _check_bin_labels(self, where: str, labels: tuple[str, ...]) -> None:
        """One label per bin, each one short printable line, no two alike (a chart axis and a
        reader tell the bins apart by them)."""
        if len(labels) != self.size:
            raise PlanError(
                f"{where} has {self.size} bins but {len(labels)} labels; give one label per "
                "bin, in bin order."
            )
        for at, label in enumerate(labels, start=1):
            if not isinstance(label, str) or not label.strip():
                raise PlanError(
                    f"{where}: the label of bin {at} must be non-empty text, got {quote(label)} "
                    "(quote labels that look like numbers)."
                )
            if len(label) > MAX_VALUE_LABEL or not label.isprintable():
                raise PlanError(
                    f"{where}: the label of bin {at} must be one printable line of at most "
                    f"{MAX_VALUE_LABEL} characters."
                )
        twice = next((label for at, label in enumerate(labels) if label in labels[:at]), None)
        if twice is not None:
            raise PlanError(f"{where}: bin labels must differ; {quote(twice)} is given twice.")

    @property
    def labels(self) -> tuple[str, ...]:
        """The bins' texts, "[a, b)" (the last "[a, b]"): the released codes."""
        texts = [format_number(e) for e in self.edges]
        labels = [f"[{a}, {b})" for a, b in itertools.pairwise(texts)]
        labels[-1] = labels[-1][:-1] + "]"
        return tuple(labels)

    @property
    def value_labels(self) -> dict[str, str] | None:
        """{bin text: label} when the plan labels the bins, as a codebook labels codes."""
        if self.bin_labels is None:
            return None
        return dict(zip(self.labels, self.bin_labels, strict=True))

    def label_of(self, code: str) -> str:
        """The label of a bin's text, or "" when the plan gives the bins none."""
        return (self.value_labels or {}).get(code, "")

    @property
    def display_labels(self) -> tuple[str, ...]:
        """What charts show: the plan's bin labels ("0–17"), else the bins ("[0, 18)")."""
        return self.bin_labels if self.bin_labels is not None else self.labels

    @property
    def size(self) -> int:
        return len(self.edges) - 1

    def codes_for_values(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bin codes for float values, and a mask of the values that were clamped.

        NaN gives code -1 (row left out). ±inf are clamped like any out-of-range value.
        """
        edges = np.asarray(self.edges, dtype=np.float64)
        codes = np.searchsorted(edges, values, side="right").astype(np.int32) - 1
        last = self.size - 1
        clamped = (values < edges[0]) | (values > edges[-1])
        np.clip(codes, 0, last, out=codes)  # also closes the last bin: x == last edge
        codes[np.isnan(values)] = MISSING_CODE
        return codes, clamped


Column = CategoricalColumn | NumericColumn


@dataclass(frozen=True)
class Schema:
    """The plan's columns, by name, in plan order."""

    columns: tuple[Column, ...]

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise PlanError("Column names must be unique.")
        if RESERVED_NAME in names:
            raise PlanError(
                f"A column may not be called '{RESERVED_NAME}': released tables use that name "
                "for the counts; rename the column in the plan."
            )
        self._check_hierarchy()
        self._check_label_columns(set(names))

    def _check_label_columns(self, names: set[str]) -> None:
        """A released table adds `C_label` after a labelled column C: no column may be called so."""
        for column in self.columns:
            if column.value_labels:
                clash = column.name + LABEL_SUFFIX
                if clash in names:
                    raise PlanError(
                        f"Column {quote(clash)} has the name of the label column that released "
                        f"tables add after the labelled column {quote(column.name)}; rename it."
                    )

    def _check_hierarchy(self) -> None:
        """Every parent exists and is categorical, every child code maps to a code of the
        parent's domain, and every parent code has at least one child code (a parent code no
        child maps to, e.g. a typo '6' for '06', would make the children not add up to the
        parent). All problems are reported at once, with the codes named."""
        by_name = {c.name: c for c in self.columns}
        problems: list[str] = []
        for column in self.columns:
            if not isinstance(column, CategoricalColumn) or column.parent is None:
                continue
            parent = by_name.get(column.parent)
            if parent is None:
                problems.append(
                    f"Column {quote(column.name)} has parent {quote(column.parent)}, which the "
                    f"plan does not define (defined: {', '.join(by_name)})."
                )
                continue
            if not isinstance(parent, CategoricalColumn):
                problems.append(
                    f"Column {quote(column.name)}: parent {quote(parent.name)} must be categorical."
                )
                continue
            assert column.parent_map is not None  # checked by the column itself
            mapped = set(column.parent_map.values())
            unknown = sorted(mapped - set(parent.labels))
            if unknown:
                problems.append(
                    f"Column {quote(column.name)}: parent_map names parent codes not in the "
                    f"domain of {quote(parent.name)} ({name_codes(unknown)}); add them to "
                    f"{quote(parent.name)}'s domain or correct the map."
                )
            childless = [label for label in parent.labels if label not in mapped]
            if childless:
                problems.append(
                    f"Column {quote(parent.name)} has codes that no code of its child "
                    f"{quote(column.name)} maps to ({name_codes(childless)}); a typo such as "
                    f"'6' for '06'? Correct the domain of {quote(parent.name)} or the parent_map."
                )
        if problems:
            raise PlanError.from_problems(problems)
        for column in self.columns:
            chain = [column.name]
            current: Column | None = column
            while isinstance(current, CategoricalColumn) and current.parent is not None:
                if current.parent in chain:
                    cycle = " -> ".join([*chain, current.parent])
                    raise PlanError(f"The geography hierarchy has a cycle: {cycle}.")
                chain.append(current.parent)
                current = by_name.get(current.parent)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @cached_property
    def key(self) -> str:
        """A digest equal for equal schemas (the columns hold dicts, so the schema itself is
        not hashable): the key of caches of what follows from the schema alone. A short
        string, so that a cache look-up does not hash thousands of codes each time."""
        value = tuple(
            (type(c).__name__, *(_hashable(getattr(c, f.name)) for f in fields(c)))
            for c in self.columns
        )
        return hashlib.sha256(repr(value).encode()).hexdigest()

    def __getitem__(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise PlanError(
            f"The plan does not define column {quote(name)} (defined: {', '.join(self.names)})."
        )

    def __contains__(self, name: object) -> bool:
        return any(c.name == name for c in self.columns)


def _hashable(value: object) -> object:
    """Mappings as sorted item tuples, sequences as tuples: equal values, equal keys."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value
