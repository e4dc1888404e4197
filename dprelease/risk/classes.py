"""CONFIDENTIAL: equivalence classes over quasi-identifiers, and k-anonymity.

Rows with equal values on every quasi-identifier (QI) form an equivalence class; a table is
k-anonymous when every class holds at least k rows (Sweeney, Samarati). Everything here is
computed from the data holder's own records and never leaves the tool: not in a release, not
in an error message.

Inputs are integer codes per row (`RiskInput`), so each measure is a handful of numpy sorts and
bincounts, never a loop over rows or classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from dprelease.data.columns import dictionary_parts, float_values
from dprelease.errors import DataError
from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn, Column, NumericColumn

Codes = np.ndarray  # int64 codes, one per row


@dataclass(frozen=True, repr=False)
class CodedColumn:
    """CONFIDENTIAL: one column as codes 0..len(labels)-1 per row, labels in code order.

    `ordered` columns have labels in increasing order (numbers, bins), which t-closeness uses
    as the ground distance; others are nominal (equal distance).
    """

    name: str
    codes: Codes
    labels: tuple[str, ...]
    ordered: bool = False

    def __post_init__(self) -> None:
        if self.codes.ndim != 1:
            raise DataError(f"Column '{self.name}' must be one value per row.")

    def __repr__(self) -> str:
        return f"CodedColumn({self.name!r}, <confidential codes>)"


@dataclass(frozen=True, repr=False)
class RiskInput:
    """CONFIDENTIAL: the quasi-identifiers and the sensitive attribute of every row."""

    qi: tuple[CodedColumn, ...]
    sensitive: CodedColumn

    def __post_init__(self) -> None:
        if not self.qi:
            raise DataError("Name at least one quasi-identifier column (--qi).")
        rows = {len(c.codes) for c in (*self.qi, self.sensitive)}
        if len(rows) != 1:
            raise DataError("All columns must have the same number of rows.")
        names = [c.name for c in self.qi]
        if len(set(names)) != len(names):
            raise DataError("A quasi-identifier is named twice; name each column once.")
        if self.sensitive.name in names:
            raise DataError(
                f"Column '{self.sensitive.name}' is both a quasi-identifier and the sensitive "
                "attribute; pick a sensitive column that is not a quasi-identifier."
            )

    @property
    def rows(self) -> int:
        return len(self.sensitive.codes)

    def __repr__(self) -> str:
        return f"RiskInput(qi={[c.name for c in self.qi]}, sensitive={self.sensitive.name!r})"


MISSING_LABEL = "(missing)"


def coded_column(
    column: pa.ChunkedArray,
    name: str,
    ordered: bool | None = None,
    declared: Column | None = None,
) -> CodedColumn:
    """Codes for one column of a table read by `dprelease.data.read.read_data`.

    Missing values are a value of their own (an attacker sees a blank too). With `ordered`
    None, the plan's declaration decides (`declared`: a categorical column is nominal, a
    binned numeric one ordered); without one, a column whose values are all numbers is
    ordered by value, else nominal. An ordered categorical column follows its domain order.
    """
    texts, indices = dictionary_parts(column, name)
    present = [t for t in texts if t is not None]
    numbers = float_values(pa.chunked_array([pa.array(present, pa.string())]), name)
    numeric = bool(present) and not np.isnan(numbers).any()
    if ordered is None:
        ordered = isinstance(declared, NumericColumn) if declared is not None else numeric
    if isinstance(declared, CategoricalColumn):
        # domain position first (outside the domain: after it), then the value, then the text
        place = declared.codes_for_texts(present).astype(np.float64)
        place[place < 0] = np.inf
    else:
        place = np.zeros(len(present))
    keys = [
        (float(place[i]), float(numbers[i]) if numeric else 0.0, t) for i, t in enumerate(present)
    ]
    order = sorted(range(len(present)), key=lambda i: keys[i]) if ordered else range(len(present))
    labels = [present[i] for i in order]
    rank = {t: r for r, t in enumerate(labels)}
    has_missing = len(present) < len(texts) or bool((indices == len(texts)).any())
    missing_code = len(labels)
    lookup = np.array(
        [rank[t] if t is not None else missing_code for t in texts] + [missing_code], np.int64
    )
    codes = lookup[indices]
    if has_missing:
        labels.append(MISSING_LABEL)
    return CodedColumn(name, codes, tuple(labels), ordered=bool(ordered))


def risk_input(
    table: pa.Table,
    qi: Sequence[str],
    sensitive: str,
    *,
    ordered: bool | None = None,
    plan: Plan | None = None,
) -> RiskInput:
    """The QI and sensitive columns of `table` as codes (column names were checked by reading).

    `ordered` forces the sensitive attribute's ground distance (True: ordered, False: equal);
    None takes it from `plan` (categorical: equal, binned numeric: ordered), else from the
    values (numbers: ordered)."""
    missing = [n for n in (*qi, sensitive) if n not in table.column_names]
    if missing:
        shown = ", ".join(table.column_names[:20])
        raise DataError(
            f"The data has no column {', '.join(repr(m) for m in missing)} "
            f"(columns in the file: {shown})."
        )
    columns = tuple(coded_column(table.column(n), n) for n in qi)
    declared = plan.schema[sensitive] if plan is not None and sensitive in plan.schema else None
    return RiskInput(columns, coded_column(table.column(sensitive), sensitive, ordered, declared))


def combine_codes(columns: Sequence[Codes]) -> tuple[Codes, int]:
    """One class id per row (0..classes-1) for the combination of the given code columns.

    Mixed radix, re-densified after each column so the key never overflows int64.
    """
    if not columns:
        raise DataError("Name at least one quasi-identifier column.")
    key = np.zeros(len(columns[0]), np.int64)
    size = 1
    for codes in columns:
        width = int(codes.max()) + 1 if len(codes) else 1
        key = key * width + codes
        uniques, key = np.unique(key, return_inverse=True)
        size = len(uniques)
    return key.astype(np.int64, copy=False), size


@dataclass(frozen=True)
class Classes:
    """CONFIDENTIAL: the equivalence classes: each row's class id and each class's size."""

    class_of_row: Codes = field(repr=False)
    sizes: Codes = field(repr=False)

    @property
    def count(self) -> int:
        return len(self.sizes)


def equivalence_classes(columns: Sequence[Codes]) -> Classes:
    ids, count = combine_codes(columns)
    return Classes(ids, np.bincount(ids, minlength=count).astype(np.int64))


@dataclass(frozen=True)
class KAnonymity:
    """CONFIDENTIAL: k (the smallest class), unique records and records in classes below k.

    `size_histogram[s]` is the number of classes of exactly s rows (index 0 unused).
    """

    rows: int
    classes: int
    k: int
    chosen_k: int
    unique: int
    below_k: int
    size_histogram: tuple[int, ...] = field(repr=False)

    @property
    def unique_share(self) -> float:
        return self.unique / self.rows if self.rows else 0.0

    @property
    def below_k_share(self) -> float:
        return self.below_k / self.rows if self.rows else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "rows": self.rows,
            "classes": self.classes,
            "k": self.k,
            "chosen_k": self.chosen_k,
            "unique": self.unique,
            "unique_share": self.unique_share,
            "below_k": self.below_k,
            "below_k_share": self.below_k_share,
        }


def k_anonymity(classes: Classes, chosen_k: int) -> KAnonymity:
    """k = min class size; `unique` rows are alone in their class; `below_k` rows are in
    classes smaller than `chosen_k` (these would have to be generalised or suppressed)."""
    if chosen_k < 1:
        raise DataError(f"k must be a whole number of at least 1, got {chosen_k}.")
    sizes = classes.sizes
    histogram = np.bincount(sizes)
    return KAnonymity(
        rows=int(sizes.sum()),
        classes=classes.count,
        k=int(sizes.min()) if len(sizes) else 0,
        chosen_k=chosen_k,
        unique=int(histogram[1]) if len(histogram) > 1 else 0,
        below_k=int(sizes[sizes < chosen_k].sum()),
        size_histogram=tuple(int(h) for h in histogram),
    )


def labels_of_class(data: RiskInput, classes: Classes, class_ids: Codes) -> list[dict[str, str]]:
    """The QI values of the given classes (for the data holder's own screen only)."""
    _, first_row = np.unique(classes.class_of_row, return_index=True)
    rows = first_row[class_ids]
    return [{c.name: c.labels[int(c.codes[r])] for c in data.qi} for r in rows]


@dataclass(frozen=True)
class ClassValues:
    """CONFIDENTIAL: how often each sensitive value occurs in each class, as sparse triples
    sorted by class then value: (class, value, count); plus the whole table's distribution."""

    pair_class: Codes = field(repr=False)
    pair_value: Codes = field(repr=False)
    pair_count: Codes = field(repr=False)
    class_sizes: Codes = field(repr=False)
    overall: np.ndarray = field(repr=False)  # share of each value in the whole table

    @property
    def values(self) -> int:
        return len(self.overall)


def class_values(classes: Classes, sensitive: CodedColumn) -> ClassValues:
    values = max(len(sensitive.labels), 1)
    key = classes.class_of_row * values + sensitive.codes
    pairs, counts = np.unique(key, return_counts=True)
    overall = np.bincount(sensitive.codes, minlength=values) / max(len(sensitive.codes), 1)
    return ClassValues(
        pairs // values, pairs % values, counts.astype(np.int64), classes.sizes, overall
    )


def class_sizes_table(k: KAnonymity) -> Mapping[int, int]:
    """Class size → number of classes of that size (sizes that occur only)."""
    return {s: n for s, n in enumerate(k.size_histogram) if s and n}
