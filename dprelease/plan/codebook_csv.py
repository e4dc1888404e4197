"""A codebook CSV for one column (the dashboard's domain import, and planning without data):
its first column the values in domain order, optional `parent` and `label` columns."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from dprelease.errors import PlanError
from dprelease.plan.edit import domain_values

LABEL_HEADERS = ("label", "labels", "description")  # a codebook's column of value labels


@dataclass(frozen=True)
class Codebook:
    """A codebook CSV read: the values (domain order), and when it has those columns each
    value's parent and label, keyed by the value's text."""

    values: list[str | int]
    parents: dict[str, str] | None
    labels: dict[str, str] | None


def read_codebook(data: bytes) -> Codebook:
    """A codebook CSV: the first column holds the values; a column named `parent` (if any)
    gives each value's parent, for the geography hierarchy; a column named `label` (or
    `description`) its label. A row with an empty label leaves that value unlabelled."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlanError("The codebook is not UTF-8 text; save it as a UTF-8 CSV.") from None
    rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    if len(rows) < 2:
        raise PlanError("The codebook needs a header row and at least one value row.")
    header = [h.strip().lower() for h in rows[0]]
    parent_at = header.index("parent") if "parent" in header else None
    label_at = next((header.index(h) for h in LABEL_HEADERS if h in header[1:]), None)
    codes: list[str] = []
    parents: dict[str, str] = {}
    labels: dict[str, str] = {}
    for number, row in enumerate(rows[1:], start=2):
        code = row[0].strip()
        if not code:
            raise PlanError(f"Codebook row {number} has no value in its first column.")
        codes.append(code)
        if parent_at is not None:
            if parent_at >= len(row) or not row[parent_at].strip():
                raise PlanError(f"Codebook row {number} has no parent value.")
            parents[code] = row[parent_at].strip()
        if label_at is not None and label_at < len(row) and row[label_at].strip():
            labels[code] = row[label_at].strip()
    return Codebook(
        domain_values(codes),
        parents if parent_at is not None else None,
        labels if label_at is not None and labels else None,
    )


def parse_codebook(data: bytes) -> tuple[list[str | int], dict[str, str] | None]:
    """A codebook's values and parents (`read_codebook` without the labels)."""
    book = read_codebook(data)
    return book.values, book.parents
