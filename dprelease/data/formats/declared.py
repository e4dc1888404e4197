"""What a data file declares about its columns, apart from its records: the producer's codebook
(Stata and SPSS value labels, every format's variable labels).

Declared metadata are public in the way a printed codebook is: a domain taken from value labels
lists the codes the producer defined, not the codes found in the records, so a plan records it
as `domain_source: value_labels` (never `data`, which marks a domain read from the records and
reported as a disclosure). The codes stay the data's codes; the labels go to the plan's
`labels:`. One caveat the dashboard repeats: labels a program made from the records (Stata's
`encode`) list the values that occur, so the producer must say they are a codebook.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

Code = str | int  # a value label's code as a plan's domain holds it (1.0 is written 1)


@dataclass(frozen=True)
class ColumnCodebook:
    """One column's declared codebook: its codes in order and their labels (by code text)."""

    domain: tuple[Code, ...]
    labels: Mapping[str, str]


@dataclass(frozen=True)
class DeclaredMetadata:
    """The labels a file declares: {column: its variable label}, {column: its codebook}."""

    variable_labels: Mapping[str, str] = field(default_factory=dict)
    codebooks: Mapping[str, ColumnCodebook] = field(default_factory=dict)

    def codebook(self, column: str) -> ColumnCodebook | None:
        return self.codebooks.get(column)

    def to_dict(self) -> dict[str, Any]:
        """For `dprelease codebook --json`: what a plan's columns can be filled from."""
        return {
            "variable_labels": dict(self.variable_labels),
            "value_labels": {
                name: {"domain": list(book.domain), "labels": dict(book.labels)}
                for name, book in self.codebooks.items()
            },
        }


def code(value: object) -> Code | None:
    """A value label's code: whole numbers as int (Stata and SPSS store 1 as 1.0), text as
    text; None for a code the plan cannot hold (NaN, an extended missing value)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else None
    text = str(value).strip()
    return text or None


def _order(pair: tuple[Code, str]) -> tuple[int, int, str]:
    """Numbers in numeric order, then texts (SPSS allows both kinds in no column at once)."""
    value = pair[0]
    return (0, value, "") if isinstance(value, int) else (1, 0, value)


def declared_from(meta: Any) -> DeclaredMetadata:
    """Labels from pyreadstat's metadata container (codes sorted: numbers, then texts)."""
    variable = {
        name: str(label).strip()
        for name, label in (meta.column_names_to_labels or {}).items()
        if label is not None and str(label).strip()
    }
    books: dict[str, ColumnCodebook] = {}
    for name, mapping in (meta.variable_value_labels or {}).items():
        pairs = [(code(value), str(label)) for value, label in mapping.items()]
        kept = [(c, label) for c, label in pairs if c is not None]
        if not kept:
            continue
        kept.sort(key=_order)
        books[name] = ColumnCodebook(
            tuple(c for c, _ in kept), {str(c): label.strip() for c, label in kept}
        )
    return DeclaredMetadata(variable, books)


def declared_metadata(
    source: str | Path | bytes, filename: str | None = None
) -> DeclaredMetadata | None:
    """The labels a data file declares, or None when its format declares none (CSV, Parquet,
    Excel). Reads the header only: no record is decoded."""
    from dprelease.data.read import _open, detect_reader

    head, name, where = _open(source, filename)
    reader = detect_reader(head, name, where)
    if not reader.declares_metadata:
        return None
    return cast(DeclaredMetadata, reader.implementation().declared(source, where))
