"""Admission of the `ldp` stage (issue 35): heavy hitters, itemsets and the simulation,
estimated from the arguments and the data file's size before a record is read.

Each respondent's report is randomised and aggregated, so the work grows with the rows and is
held by the read's limits; the choice made here is itemsets' path. A file of at most
LDP_ITEMSETS_MAX_MB cannot hold more answer text than itemsets parses, so it runs in full;
a larger file may still hold few distinct answers, so its column is read and its distinct
answers' text is checked against LDP_ITEMSETS_MAX_MB before any item is parsed
(`itemsets.parse_answers`): refused in one line there, not after minutes of parsing.
"""

from __future__ import annotations

from dataclasses import dataclass

from dprelease.admission import Admitted, DataSize, Estimate, admit, register
from dprelease.limits import LDP_ITEMSETS_MAX_MB

_MIN_ROW_BYTES = 2  # one character and a newline: the most rows a file of B bytes holds
_NS_PER_ROW_BYTE = 40  # heavy hitters: one prefix step per byte of a value, per respondent
_ITEMSETS_NS_PER_BYTE = 120  # itemsets: 0.12 s per MB of answer text (issue 35, finding 7)
_ITEMSETS_BYTES_PER_BYTE = 18  # and 18 MB of memory per MB
_SIMULATE_NS_PER_CELL = 2  # a unary or hashed report touches every value of the domain


@dataclass(frozen=True)
class LdpTask:
    """What `ldp` is asked: `kind` is heavy-hitters, itemsets or simulate."""

    kind: str
    max_length: int = 16
    domain_size: int | None = None  # simulate with --plan: the public domain's size


def ldp_estimate(task: LdpTask, data: DataSize) -> Estimate:
    size = data.bytes or 0
    rows = data.rows if data.rows is not None else size // _MIN_ROW_BYTES
    if task.kind == "itemsets":
        fits = size <= LDP_ITEMSETS_MAX_MB * 1_000_000
        path = (
            "full (the file holds at most LDP_ITEMSETS_MAX_MB of answers)"
            if fits
            else "the distinct answers' text checked against LDP_ITEMSETS_MAX_MB, then parsed"
        )
        text = min(size, LDP_ITEMSETS_MAX_MB * 1_000_000)
        work, memory = text * _ITEMSETS_NS_PER_BYTE, text * _ITEMSETS_BYTES_PER_BYTE
    elif task.kind == "heavy-hitters":
        path = f"prefix search over {task.max_length} bytes"
        work, memory = rows * task.max_length * _NS_PER_ROW_BYTE, rows * 16
    else:
        cells = task.domain_size or 2
        path = f"simulation over {task.domain_size or 'the data’s'} values"
        work, memory = rows * cells * _SIMULATE_NS_PER_CELL, rows * 16
    limit = "LDP_ITEMSETS_MAX_MB" if task.kind == "itemsets" else "MAX_DATA_MB"
    return Estimate("ldp", work, memory, limit, path, data_bound=True)


register("ldp", ldp_estimate)


def admit_ldp(task: LdpTask, data: DataSize) -> Admitted:
    """The `ldp` commands' and the Local DP page's admission, before the data are read."""
    return admit(task, data, ("ldp",))
