"""CONFIDENTIAL simulation on real data: randomise a column under a protocol as the
respondents would, estimate the frequencies, post-process, and compare with the truth.

The result holds true counts, so it is for the data holder's screen only (like Preview):
never exported, never part of a release.

Post-processing (free: it reads only the estimates):
- `clamp`: max(ĉ, 0), cell by cell;
- `project`: the Euclidean projection onto {x ≥ 0, Σx = n}, i.e. x = max(ĉ − τ, 0) with τ
  chosen so the sum is n. Norm-Sub (Wang et al. 2020: zero the negatives, subtract the same
  amount from the positives so they sum to n, repeat) ends at exactly this point; it is
  computed here in one sort.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from dprelease.data.columns import dictionary_parts, float_values
from dprelease.errors import quote
from dprelease.ldp.base import LdpError, check_epsilon, secure_generator
from dprelease.ldp.planner import normal_quantile
from dprelease.ldp.registry import protocol
from dprelease.plan.schema import CategoricalColumn, Column
from dprelease.release.metrics import ErrorMetrics, error_metrics

MISSING = -1


def project_to_simplex(estimates: np.ndarray, total: float) -> np.ndarray:
    """argmin ‖x − ĉ‖₂ subject to x ≥ 0, Σx = total (Held, Wolfe & Crowder; one sort)."""
    values = np.asarray(estimates, dtype=np.float64)
    ordered = np.sort(values)[::-1]
    cumulative = np.cumsum(ordered) - total
    ranks = np.arange(1, len(values) + 1)
    last = np.flatnonzero(ordered - cumulative / ranks > 0)[-1]
    shift = cumulative[last] / (last + 1)
    projected: np.ndarray = np.maximum(values - shift, 0.0)
    return projected


@dataclass(frozen=True)
class EncodedColumn:
    """CONFIDENTIAL: one column's codes 0..d−1 on its public domain, −1 for a row without a
    value in the domain (left out: a respondent must answer from the domain)."""

    name: str
    labels: tuple[str, ...]
    all_codes: np.ndarray = field(repr=False)

    @property
    def domain_size(self) -> int:
        return len(self.labels)

    @property
    def codes(self) -> np.ndarray:
        kept: np.ndarray = self.all_codes[self.all_codes != MISSING]
        return kept

    @property
    def rows_left_out(self) -> int:
        return int(np.count_nonzero(self.all_codes == MISSING))


def encode_column(table: pa.Table, name: str, column: Column | None = None) -> EncodedColumn:
    """Codes of `name` on the public domain `column` (from a plan); without one, the domain is
    the column's distinct texts: acceptable here only because the simulation stays private."""
    if name not in table.column_names:
        # The file's own header is not quoted: in a headerless file it is a record.
        raise LdpError(
            f"The data has no column {quote(name)} ({table.num_columns} columns; "
            "check the name's spelling and case)."
        )
    values = table.column(name)
    if column is None:
        texts, indices = dictionary_parts(values, name)
        column = CategoricalColumn(name, tuple(sorted(t for t in texts if t is not None)))
    if isinstance(column, CategoricalColumn):
        texts, indices = dictionary_parts(values, name)
        lookup = np.append(column.codes_for_texts(texts), column.other_code)
        codes = lookup[indices]
    else:
        codes, _ = column.codes_for_values(float_values(values, name))
    if column.size < 2:
        raise LdpError(f"Column {quote(name)} needs a domain of at least 2 values.")
    return EncodedColumn(name, column.labels, codes.astype(np.int64))


@dataclass(frozen=True)
class Simulation:
    """CONFIDENTIAL: true counts, raw estimates and both post-processings, with their errors."""

    protocol: str
    epsilon: float
    labels: tuple[str, ...]
    n: int
    rows_left_out: int
    moe: float
    true_counts: np.ndarray = field(repr=False)
    estimated: np.ndarray = field(repr=False)
    clamped: np.ndarray = field(repr=False)
    projected: np.ndarray = field(repr=False)

    def errors(self) -> dict[str, ErrorMetrics]:
        return {
            "raw estimate": error_metrics(self.true_counts, self.estimated, self.moe),
            "clamped at 0": error_metrics(self.true_counts, self.clamped, self.moe),
            "projected (sum = n)": error_metrics(self.true_counts, self.projected, self.moe),
        }


def simulate(
    encoded: EncodedColumn,
    protocol_name: str,
    epsilon: float,
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
) -> Simulation:
    """Randomise every respondent's value, estimate, post-process; compare with the truth."""
    chosen = protocol(protocol_name)
    epsilon = check_epsilon(epsilon)
    d, n = encoded.domain_size, len(encoded.codes)
    if n == 0:
        raise LdpError(f"Column {quote(encoded.name)} has no value in its domain.")
    estimated = chosen.estimate_counts(encoded.codes, epsilon, d, rng or secure_generator())
    variance = chosen.probabilities(epsilon, d).variance(n)
    return Simulation(
        protocol=chosen.name,
        epsilon=epsilon,
        labels=encoded.labels,
        n=n,
        rows_left_out=encoded.rows_left_out,
        moe=normal_quantile(confidence) * float(np.sqrt(variance)),
        true_counts=np.bincount(encoded.codes, minlength=d),
        estimated=estimated,
        clamped=np.maximum(estimated, 0.0),
        projected=project_to_simplex(estimated, n),
    )
