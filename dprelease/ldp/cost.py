"""Admission of the `ldp` stage (issue 35): heavy hitters, itemsets and the simulation,
estimated from the arguments and the data file's size before a record is read.

The simulation randomises and aggregates each respondent's report: its work grows with the
rows, held by the read's limits. Heavy hitters and itemsets search prefixes byte by byte, one
level per byte of `--max-length` (at most `prefix.MAX_LENGTH`), and each level estimates all
2^20 hashed values with one Walsh–Hadamard transform whatever the rows: work the arguments
decide, counted against admission's total. Itemsets also parses the answers: a file of at most
LDP_ITEMSETS_MAX_MB cannot hold more answer text than it parses, so it runs in full; a larger
file may still hold few distinct answers, so its column is read and its distinct answers'
text is checked against LDP_ITEMSETS_MAX_MB before any item is parsed
(`itemsets.parse_answers`): the path this estimator names.
"""

from __future__ import annotations

from dataclasses import dataclass

from dprelease.admission import Admitted, DataSize, Estimate, admit, register
from dprelease.limits import LDP_ITEMSETS_MAX_MB

_MIN_ROW_BYTES = 2  # one character and a newline: the most rows a file of B bytes holds
# One level of the prefix search: the 2^20-value transform and its support counts (32 levels
# took 2.1 s of CPU here with one BLAS thread; two threads spin on a busy machine, up to 5×).
_LEVEL_NS = 60_000_000
_LEVEL_BYTES = 64 << 20  # the transform's float64 copies of 2^20 values and the spans
_SIMULATE_NS_PER_CELL = 2  # a unary or hashed report touches every value of the domain


@dataclass(frozen=True)
class LdpTask:
    """What `ldp` is asked: `kind` is heavy-hitters, itemsets or simulate."""

    kind: str
    max_length: int = 16
    domain_size: int | None = None  # simulate with --plan: the public domain's size


def ldp_estimate(task: LdpTask, data: DataSize) -> Estimate:
    """The prefix search's levels, which the arguments bound, against admission's total;
    the simulation's work grows with the rows (held by the data's limits), and itemsets' parse
    is held by LDP_ITEMSETS_MAX_MB (its path named here)."""
    size = data.bytes or 0
    if task.kind == "simulate":
        rows = data.rows if data.rows is not None else size // _MIN_ROW_BYTES
        cells = task.domain_size or 2
        path = f"simulation over {task.domain_size or 'the data’s'} values"
        work = rows * cells * _SIMULATE_NS_PER_CELL
        return Estimate("ldp", work, rows * 16, "MAX_DATA_MB", path, data_bound=True)
    levels = task.max_length * _LEVEL_NS
    path = f"prefix search over {task.max_length} bytes"
    if task.kind == "itemsets":  # the parse is held by LDP_ITEMSETS_MAX_MB, checked after reading
        path += (
            "; answers parsed whole (the file holds at most LDP_ITEMSETS_MAX_MB)"
            if size <= LDP_ITEMSETS_MAX_MB * 1_000_000
            else "; the distinct answers' text checked against LDP_ITEMSETS_MAX_MB, then parsed"
        )
    advice = "use a smaller --max-length"
    return Estimate("ldp", levels, _LEVEL_BYTES, "prefix.MAX_LENGTH", path, advice=advice)


register("ldp", ldp_estimate)


def admit_ldp(task: LdpTask, data: DataSize) -> Admitted:
    """The `ldp` commands' and the Local DP page's admission, before the data are read."""
    return admit(task, data, ("ldp",))
