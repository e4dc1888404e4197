"""Heavy hitters under local DP: the most frequent values of a domain too large to list, by
the prefix extending method (PEM; Wang, Li & Jha, "Locally differentially private heavy hitter
identification", TDSC 2019) over a frequency oracle on hashed values.

Respondent (the randomiser, ε-LDP): a value is a row of L bytes (`prefix`). Each respondent
picks a level s ∈ {1..L} uniformly at random, independently of the value, fingerprints the
value's prefix of length s, keeps its low BITS = 20 bits (a public hash into 2^20 values),
and sends (s, report) where the report is local hashing with a random linear hash over GF(2)
(`linear_hashing`): given the hash matrix, GRR over g buckets, likelihood ratio ≤ e^ε for any
two inputs (1 for equal ones); s and the matrix carry no information. So for any two values
x, x' and output y, P[y | x] ≤ e^ε·P[y | x']: ε-LDP, whatever the hashes, nothing composed.

Aggregator (post-processing, free): level by level, the candidates are the kept prefixes of
the previous level, each extended by every byte that can follow it in UTF-8 (a prefix that
already ended only by the end byte). The oracle's estimates of all 2^20 hashed values come
from one Walsh–Hadamard transform (independent of how many candidates are looked up); a
candidate's estimate is its hashed value's. The `keep` = 2·top best candidates go on; the
last level's are whole values. Only values whose estimate clears `prefix.noise_bound` are
reported (a Bernstein bound on the support count of a value held by no one, union over the C
candidates compared at the last level, α = 1 − confidence): the last level looks at
thousands of candidates held by no one, and the largest of their noisy estimates is about
4 standard deviations; without this bound the top would be padded with such noise (with
probability ≥ 1 − α no value held by no one is reported). So fewer than `top` may come back.

Estimates and margins (p = e^ε/(e^ε+g−1), q* = 1/g): the last level's estimate, scaled by L
(its respondents are a 1/L sample), is unbiased for a value's count up to hash collisions;
its variance is `prefix.sampled_variance` with pad = 1, share = 1/L:

    Var = L·(n_v·p(1−p) + (n − n_v)·q*(1−q*))/(p − q*)² + (L − 1)·n_v

and the margin of error is z·√Var at the plug-in n_v = max(estimate, 0). Collisions: a
hashed value also collects the values that share it; the expected extra mass is at most
m/2^20 for a level of m respondents (under 0.1 respondents at m = 10^5), far below the noise.

The result holds no true count; `n` (the number of reports) is kept for the dashboard's
central-DP comparison. In a local-DP survey the collector sees how many reports arrive: LDP
hides each answer, not who answered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dprelease.errors import quote
from dprelease.ldp import linear_hashing
from dprelease.ldp.base import (
    LdpError,
    check_epsilon,
    margin_reports,
    margin_rows,
    secure_generator,
)
from dprelease.ldp.planner import central_histogram, normal_quantile
from dprelease.ldp.prefix import (
    PAD,
    SEED,
    check_max_length,
    decode,
    encode,
    extend,
    noise_bound,
    prefix_fingerprints,
    sampled_variance,
)

BITS = 20  # prefixes hashed into 2^20 values: a 2^20 Walsh–Hadamard transform per level
MASK = np.uint64((1 << BITS) - 1)
MAX_TOP = 1000
BYTES = np.arange(256, dtype=np.uint8)


def check_top(top: int) -> int:
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or not 1 <= top <= MAX_TOP:
        raise LdpError(f"--top must be a whole number from 1 to {MAX_TOP}, got {quote(top)}.")
    return int(top)


@dataclass(frozen=True)
class Hit:
    value: str
    estimate: float
    moe: float


@dataclass(frozen=True)
class HeavyHitters:
    """The top values with estimated counts and margins; no true count."""

    epsilon: float
    confidence: float
    max_length: int
    top: tuple[Hit, ...]
    moe_near_zero: float  # the margin of error of a count near 0
    threshold: float  # the smallest estimate reported: above the noise of every candidate
    n: int = field(repr=False)  # reports received: for the central-DP comparison only
    protocol: str = "PEM over local hashing (linear, GF(2)) of hashed prefixes"

    def to_dict(self) -> dict[str, object]:
        """The contract's JSON (`ldp heavy-hitters --json`): estimates and margins only."""
        return {
            "top": [{"value": h.value, "estimate": h.estimate, "moe": h.moe} for h in self.top],
            "epsilon": self.epsilon,
            "confidence": self.confidence,
            "max_length": self.max_length,
            "levels": self.max_length,
            "hashed_values": 1 << BITS,
            "buckets": linear_hashing.buckets(self.epsilon),
            "protocol": self.protocol,
            "threshold": self.threshold,
            "confidential": "a simulation on your records: not charged, not for publication",
        }


def respond(
    fingerprints: np.ndarray, codes: np.ndarray, epsilon: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """THE RANDOMISER, run by each respondent (vectorised over them): `fingerprints[c, s]` is
    the fingerprint of value c's prefix of length s + 1. A level s, uniform and independent of
    the value; the prefix's hashed value; its local-hashing report. Returns (levels, hash
    matrices, reported buckets)."""
    levels = rng.integers(0, fingerprints.shape[1], size=len(codes))
    hashed = (fingerprints[codes, levels] & MASK).astype(np.int64)
    matrices, reported = linear_hashing.randomise(hashed, epsilon, BITS, rng)
    return levels, matrices, reported


def level_estimates(matrices: np.ndarray, reported: np.ndarray, epsilon: float) -> np.ndarray:
    """The aggregator: the unbiased estimate of every hashed value from one level's reports."""
    counts = linear_hashing.support_counts(matrices, reported, epsilon, BITS)
    return linear_hashing.probabilities(epsilon).estimate(counts, len(reported))


# UTF-8 (RFC 3629): how many continuation bytes (0x80–0xBF) a byte announces; −1 = never first.
_CONTINUATIONS = np.full(256, -1, dtype=np.int64)
_CONTINUATIONS[:0x80] = 0
_CONTINUATIONS[0xC2:0xE0] = 1
_CONTINUATIONS[0xE0:0xF0] = 2
_CONTINUATIONS[0xF0:0xF5] = 3
_CONTINUATIONS[PAD] = 0


def allowed_next(pending: np.ndarray, ended: np.ndarray) -> np.ndarray:
    """(prefixes, 256): which bytes can follow each prefix in a value's byte row. Values are
    UTF-8, so a prefix that is not (a continuation byte out of place, 0xC0, 0xF5…) is no one's:
    a public rule, so dropping such candidates is post-processing. After the end byte only
    the end byte follows."""
    continuation = (BYTES >= 0x80) & (BYTES < 0xC0)
    starts = _CONTINUATIONS[BYTES] >= 0
    allowed = np.where(pending[:, None] > 0, continuation[None, :], starts[None, :])
    allowed[ended] = BYTES == PAD
    return allowed


def prefix_search(
    rows: np.ndarray, codes: np.ndarray, epsilon: float, keep: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """PEM: `rows` are the distinct values' byte rows, `codes` each respondent's row. Returns
    the `keep` best whole values (byte rows), their last-level estimates (unscaled, best
    first), how many candidates the last level compared, and how many reports it had."""
    length = rows.shape[1]
    levels, matrices, reported = respond(prefix_fingerprints(rows), codes, epsilon, rng)
    kept_rows = np.zeros((1, 0), dtype=np.uint8)
    kept_prints = np.array([SEED], dtype=np.uint64)
    pending = np.zeros(1, dtype=np.int64)  # continuation bytes each kept prefix still needs
    last_scores = np.zeros(0)
    scores = np.zeros((1, 256))
    for s in range(length):
        here = levels == s
        estimates = level_estimates(matrices[here], reported[here], epsilon)
        children = extend(kept_prints[:, None], BYTES[None, :])  # (kept, 256)
        scores = estimates[(children & MASK).astype(np.int64)]
        ended = kept_rows[:, -1] == PAD if s > 0 else np.zeros(len(kept_rows), dtype=bool)
        scores[~allowed_next(pending, ended)] = -np.inf
        flat = scores.ravel()
        best = np.argpartition(-flat, min(keep, flat.size) - 1)[:keep]
        best = best[np.argsort(-flat[best], kind="stable")]
        best = best[np.isfinite(flat[best])]
        parent, byte = np.divmod(best, 256)
        kept_rows = np.column_stack([kept_rows[parent], byte.astype(np.uint8)])
        kept_prints = children[parent, byte]
        pending = np.where(
            pending[parent] > 0, pending[parent] - 1, _CONTINUATIONS[byte.astype(np.int64)]
        )
        last_scores = flat[best]
    compared = int(np.count_nonzero(np.isfinite(scores)))
    return kept_rows, last_scores, compared, int(np.count_nonzero(levels == length - 1))


def text_codes(
    texts: list[str | None], indices: np.ndarray, name: str
) -> tuple[list[str], np.ndarray]:
    """The non-empty distinct texts and each answering respondent's index into them (rows
    without a value are left out)."""
    present = [i for i, t in enumerate(texts) if t is not None and t.strip() != ""]
    lookup = np.full(len(texts) + 1, -1, dtype=np.int64)
    lookup[present] = np.arange(len(present))
    codes = lookup[indices]
    codes = codes[codes >= 0]
    if len(codes) == 0:
        raise LdpError(f"Column {quote(name)} has no value to report.")
    return [texts[i] or "" for i in present], codes


def heavy_hitters(
    texts: list[str],
    codes: np.ndarray,
    epsilon: float,
    top: int = 10,
    max_length: int = 16,
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
) -> HeavyHitters:
    """Every respondent (codes: index into `texts`) randomises its value; the top values."""
    epsilon, top = check_epsilon(epsilon), check_top(top)
    max_length = check_max_length(max_length)
    z = normal_quantile(confidence)
    rows = encode(texts, max_length)
    found, scores, compared, reports = prefix_search(
        rows, codes, epsilon, 2 * top, rng or secure_generator()
    )
    support = linear_hashing.probabilities(epsilon)
    n, share = len(codes), 1 / max_length
    rows_for_margins = margin_rows(n)  # never the exact row count (issue 34)
    sd_near_zero = float(np.sqrt(sampled_variance(support, rows_for_margins, 0.0, share=share)))
    # The last level compares `compared` candidates, nearly all held by no one: only an
    # estimate above the bound of their noise is told apart from it.
    bound_reports = margin_reports(reports, n)
    threshold = noise_bound(support, bound_reports, compared, 1 - confidence) * max_length
    hits: list[Hit] = []
    for row, score in zip(found, scores, strict=True):
        estimate = float(score) * max_length
        if estimate < threshold or len(hits) == top:
            break
        moe = z * float(np.sqrt(sampled_variance(support, rows_for_margins, estimate, share=share)))
        hits.append(Hit(decode(row), estimate, moe))
    return HeavyHitters(
        epsilon, confidence, max_length, tuple(hits), z * sd_near_zero, threshold, n
    )


def central_respondents(
    n: int, moe_near_zero: float, epsilon: float, confidence: float, sensitivity: int = 1
) -> float:
    """How many respondents central DP needs for the same margin of error on a *share*: the
    local share margin is moe/n (here of a count near 0); a central count's margin does not
    grow with n, so n_c = n·moe_c/moe. moe_c: the discrete Laplace histogram at ε with L1
    sensitivity Δ (1 when each person holds one value; l for counts of items when each answer
    is capped at l items), i.e. Δ times the margin at sensitivity 1 (the scale is Δ/ε)."""
    return n * sensitivity * central_histogram(epsilon, confidence).moe / moe_near_zero


@dataclass(frozen=True)
class TopAccuracy:
    """CONFIDENTIAL (it reads true counts): how well the found values match the true top."""

    precision: float
    recall: float
    in_true_top: tuple[bool, ...]


def true_value_counts(texts: list[str], codes: np.ndarray, max_length: int) -> Counter[str]:
    """CONFIDENTIAL: each value's true count, values cut to `max_length` bytes as the search
    sees them."""
    counts: Counter[str] = Counter()
    per_text = np.bincount(codes, minlength=len(texts))
    for text, count in zip(texts, per_text.tolist(), strict=True):
        if count:
            counts[decode(encode([text], max_length)[0])] += count
    return counts


def precision_recall(found: Sequence[Hashable], truth: Counter[Any], k: int) -> TopAccuracy:
    """Precision |F ∩ T|/|F| and recall |F ∩ T|/min(k, |T|), T the true top k (with the
    values tied at the k-th count)."""
    if not truth:
        return TopAccuracy(0.0, 0.0, tuple(False for _ in found))
    ranked = sorted(truth.values(), reverse=True)
    threshold = ranked[min(k, len(ranked)) - 1]
    top = {v for v, c in truth.items() if c >= threshold}
    flags = tuple(v in top for v in found)
    precision = sum(flags) / len(found) if found else 0.0
    return TopAccuracy(precision, sum(flags) / min(k, len(top)), flags)
