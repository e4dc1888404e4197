"""Frequent items and pairs of set-valued answers under local DP: padding and sampling
(Qin et al., LDPMiner, CCS 2016; Wang, Li & Jha, SVIM, S&P 2018).

An answer is a cell listing items separated by ";" (e.g. "English; Spanish"): items are
stripped of surrounding spaces, duplicates count once, empty pieces are ignored. A cell
holding "|" is refused as ambiguous (a separator, or part of an item?), and so is an answer
without any item: a respondent who names nothing has nothing to sample.

Each respondent joins one of four groups at random (shares `SHARES`, independent of the
answer) and sends one ε-LDP report:

1. candidates: sample one of their items uniformly and report it through the heavy-hitter
   search (`heavy_hitters.prefix_search`: PEM over local hashing of hashed prefixes); the 2·top best
   items become the public candidates C.
2. sizes: report t = |answer ∩ C| (capped at SIZE_CAP) by the best frequency protocol for
   SIZE_CAP + 1 values; the aggregator takes the pad length l as the estimated 90th
   percentile of t (at least 1), as SVIM does.
3. items: pad answer ∩ C to l with a dummy and sample one (each item with probability
   1/max(t, l)); report its index among C + dummy by the best protocol for |C| + 1 values.
   The estimate of an item, scaled by l/share, is unbiased for its count among respondents
   with t ≤ l; a larger answer is sampled at l/t, so its items are counted short, and the
   estimate is multiplied by SVIM's correction (`undercount_correction`), which assumes
   every item's holders have the same size distribution (margins scale with it).
4. pairs: the same over the pairs of candidates held, padded to l(l − 1)/2, without the
   correction: an answer with t candidates holds t(t − 1)/2 pairs, so the correction would
   hang on the noisy tail of the size estimate (measured: ×5 where ×1.1 was right); pairs of
   answers holding more than l(l − 1)/2 candidate pairs are counted short instead.

Privacy: the group and the sampling are chosen before the report; given the item (or pair,
or size) sent, each protocol is ε-LDP for any two inputs. So for two answers S, S' and any
output y, P[y | S] = Σ_x P[x | S]·P[y | x] ≤ max_x P[y | x] ≤ e^ε·min_x P[y | x] ≤
e^ε·P[y | S']: ε-LDP per respondent (sampling may amplify privacy further; not claimed).

Margins: `prefix.sampled_variance` with pad = l (or l(l−1)/2) and the group's share, at the
plug-in count; as for heavy hitters, only estimates above the noise bound of the candidates
held by no one (`prefix.noise_bound`) are reported.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dprelease.errors import quote
from dprelease.ldp.base import (
    LdpError,
    check_epsilon,
    margin_reports,
    margin_rows,
    secure_generator,
)
from dprelease.ldp.heavy_hitters import Hit, check_top, prefix_search
from dprelease.ldp.planner import best_of, normal_quantile, protocol_accuracies
from dprelease.ldp.prefix import (
    check_max_length,
    decode,
    encode,
    noise_bound,
    sampled_variance,
)
from dprelease.ldp.registry import protocol
from dprelease.ldp.simulation import project_to_simplex
from dprelease.limits import LDP_ITEMSETS_MAX_MB

SEPARATOR = ";"
AMBIGUOUS = "|"
SIZE_CAP = 8
PERCENTILE = 0.9
SHARES = {"candidates": 0.35, "sizes": 0.1, "items": 0.25, "pairs": 0.3}


@dataclass(frozen=True)
class SetAnswers:
    """CONFIDENTIAL: the distinct items (cut to max_length bytes), each distinct answer as
    item ids, and each respondent's answer."""

    items: tuple[str, ...]
    answers: tuple[tuple[int, ...], ...]
    codes: np.ndarray = field(repr=False)


def _cut(item: str, max_length: int) -> str:
    """An item as the prefix search sees it: its first `max_length` UTF-8 bytes (a character
    cut at the end shows as �), as `decode(encode([item]))` gives it, without numpy per item."""
    return item.encode("utf-8")[:max_length].decode("utf-8", errors="replace")


def split_items(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in text.split(SEPARATOR) if p.strip()))


def parse_answers(
    texts: list[str | None], indices: np.ndarray, name: str, max_length: int
) -> SetAnswers:
    """The column's answers; one-line errors for "|" and for an answer without items.

    Whole columns at a time (arrow splits, trims and encodes the items; numpy deduplicates
    each answer's): per item in Python, 2,000 answers of 1,000 items took 30 s (issue 35)."""
    answers_text = pa.array(list(texts), pa.string())
    size = pc.sum(pc.binary_length(answers_text)).as_py() or 0
    if size > LDP_ITEMSETS_MAX_MB * 1_000_000:
        raise LdpError(
            f"The distinct answers of column {quote(name)} hold {size / 1e6:,.0f} MB of text; "
            f"itemsets reads at most {LDP_ITEMSETS_MAX_MB} MB (it parses every item in "
            "memory): give a sample of the respondents, or fewer items per answer."
        )
    if pc.any(pc.match_substring(answers_text, AMBIGUOUS)).as_py():
        raise LdpError(
            f"Column {quote(name)} holds '{AMBIGUOUS}': items must be separated by "
            f"'{SEPARATOR}' only (is '{AMBIGUOUS}' a separator or part of an item?)."
        )
    pieces = pc.split_pattern(answers_text, SEPARATOR)
    owner = np.asarray(pc.list_parent_indices(pieces), dtype=np.int64)
    items = pc.utf8_trim_whitespace(pc.list_flatten(pieces))
    filled = np.asarray(pc.greater(pc.binary_length(items), 0), dtype=bool)
    owner, items = owner[filled], items.filter(pa.array(filled))
    sizes = np.bincount(owner, minlength=len(texts) + 1)  # + missing: no items
    blank = np.flatnonzero(sizes[indices] == 0)
    if blank.size:
        raise LdpError(
            f"Column {quote(name)} has an empty answer (data row {int(blank[0]) + 1} is the "
            f"first): every respondent lists at least one item, separated by '{SEPARATOR}'."
        )
    encoded = pc.dictionary_encode(items) if len(items) else None
    if encoded is None:
        return SetAnswers((), tuple(() for _ in range(len(texts) + 1)), indices.astype(np.int64))
    distinct = encoded.dictionary.to_pylist()  # in order of first appearance
    long = np.flatnonzero(np.asarray(pc.binary_length(encoded.dictionary)) > max_length)
    for index in long.tolist():  # cut to max_length bytes: a few items, one by one
        distinct[index] = _cut(distinct[index], max_length)
    ids = np.asarray(encoded.indices, dtype=np.int64)
    vocabulary = distinct
    if long.size:  # two items may be one once cut
        first = {v: i for i, v in enumerate(dict.fromkeys(distinct))}
        vocabulary = list(first)
        ids = np.array([first[v] for v in distinct], dtype=np.int64)[ids]
    keys = np.sort(owner * len(vocabulary) + ids)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]  # each answer's items once
    owners, members = np.divmod(keys, len(vocabulary))
    bounds = np.searchsorted(owners, np.arange(len(texts) + 2))
    flat = members.tolist()
    answers = tuple(tuple(flat[a:b]) for a, b in itertools.pairwise(bounds.tolist()))
    return SetAnswers(tuple(vocabulary), answers, indices.astype(np.int64))


@dataclass(frozen=True)
class PairHit:
    items: tuple[str, str]
    estimate: float
    moe: float


@dataclass(frozen=True)
class Itemsets:
    """Frequent items and pairs with estimated counts and margins; no true count."""

    epsilon: float
    confidence: float
    max_length: int
    pad_length: int
    items: tuple[Hit, ...]
    pairs: tuple[PairHit, ...]
    moe_near_zero: float  # the margin of error of an item's count near 0
    n: int = field(repr=False)  # reports received: for the central-DP comparison only

    def to_dict(self) -> dict[str, object]:
        return {
            "items": [{"value": h.value, "estimate": h.estimate, "moe": h.moe} for h in self.items],
            "pairs": [
                {"items": list(h.items), "estimate": h.estimate, "moe": h.moe} for h in self.pairs
            ],
            "epsilon": self.epsilon,
            "confidence": self.confidence,
            "max_length": self.max_length,
            "pad_length": self.pad_length,
            "confidential": "a simulation on your records: not charged, not for publication",
            "separator": SEPARATOR,
            "shares": SHARES,
        }


def _padded_sample(
    held: list[list[int]], codes: np.ndarray, pad: int, dummy: int, rng: np.random.Generator
) -> np.ndarray:
    """Each respondent's answer (held[code]) padded to `pad` with `dummy`, one entry sampled:
    each held entry with probability 1/max(len, pad). The answers lie end to end in one
    array (no table as wide as the longest answer: one answer of a million items made it
    distinct answers × a million)."""
    lengths = np.array([len(h) for h in held], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    flat = np.fromiter(
        itertools.chain.from_iterable(held), dtype=np.int64, count=int(lengths.sum())
    )
    sizes = np.maximum(lengths, pad)
    slot = (rng.random(len(codes)) * sizes[codes]).astype(np.int64)
    inside = slot < lengths[codes]
    sampled = np.full(len(codes), dummy, dtype=np.int64)
    sampled[inside] = flat[starts[codes[inside]] + slot[inside]]
    return sampled


def _best_protocol(epsilon: float, d: int, m: int) -> str:
    return best_of(protocol_accuracies(epsilon, d, max(m, 1), 0.95)).name


def _estimates(
    values: np.ndarray, epsilon: float, d: int, rng: np.random.Generator
) -> tuple[np.ndarray, str]:
    name = _best_protocol(epsilon, d, len(values))
    return protocol(name).estimate_counts(values, epsilon, d, rng), name


def _sd_near_zero(name: str, epsilon: float, d: int, n: int, pad: int, share: float) -> float:
    support = protocol(name).probabilities(epsilon, d)
    return float(np.sqrt(sampled_variance(support, n, 0.0, pad=pad, share=share)))


def _top(
    estimates: np.ndarray,
    reports: int,
    boost: float,
    pad: int,
    share: float,
    epsilon: float,
    name: str,
    n: int,
    top: int,
    confidence: float,
) -> list[tuple[int, float, float]]:
    """(index, estimate, moe) of the best indices whose raw estimate (from `reports` reports)
    clears the noise bound; estimates scaled by boost·pad/share (the dummy's estimate is not
    among `estimates`)."""
    support = protocol(name).probabilities(epsilon, len(estimates) + 1)
    z = normal_quantile(confidence)
    # margins at the row count rounded up, never the exact one (`base.margin_rows`)
    reports, n = margin_reports(reports, n), margin_rows(n)
    threshold = noise_bound(support, reports, len(estimates), 1 - confidence)
    out = []
    for index in np.argsort(-estimates, kind="stable")[:top]:
        if estimates[index] < threshold:
            break
        raw = float(estimates[index]) * pad / share
        var = sampled_variance(support, n, raw, pad=pad, share=share)
        out.append((int(index), boost * raw, boost * z * float(np.sqrt(var))))
    return out


def undercount_correction(shares_by_size: np.ndarray, pad: int) -> float:
    """SVIM's correction for answers longer than the pad: a holder with t > l entries is
    sampled at l/t, not 1. Assuming every item's holders follow the estimated size
    distribution P(t), size-biased (a holder of t entries holds t of them), the expected
    estimate is Σ t·P(t)·min(1, l/t) / Σ t·P(t) of the count: divide by it."""
    t = np.arange(len(shares_by_size))
    weight = t * shares_by_size
    seen = float(np.sum(weight * np.minimum(1.0, pad / np.maximum(t, 1))))
    return float(weight.sum()) / seen if seen > 0 else 1.0


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def frequent_itemsets(
    answers: SetAnswers,
    epsilon: float,
    top: int = 10,
    max_length: int = 16,
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
) -> Itemsets:
    """Every respondent sends one report (see the module docstring); items and pairs."""
    epsilon, top = check_epsilon(epsilon), check_top(top)
    max_length = check_max_length(max_length)
    rng = rng or secure_generator()
    codes, n = answers.codes, len(answers.codes)
    group = rng.choice(len(SHARES), size=n, p=list(SHARES.values()))
    shares = list(SHARES.values())
    # 1. candidates: one item per respondent, found by the prefix search.
    mine = codes[group == 0]
    held_all = [list(a) for a in answers.answers]
    sampled = _padded_sample(held_all, mine, 1, -1, rng)
    # Only items some respondent of this group sent can be found: encode those (at most one
    # per respondent), not every distinct item (a million of them held gigabytes of prefixes).
    sent, reports = np.unique(sampled, return_inverse=True)
    rows = encode([answers.items[i] for i in sent.tolist()], max_length)
    found, _, _, _ = prefix_search(rows, reports.reshape(-1), epsilon, 2 * top, rng)
    candidates = [decode(r) for r in found]
    found_at = pc.index_in(pa.array(candidates, pa.string()), pa.array(answers.items, pa.string()))
    position = {int(i): j for j, i in enumerate(found_at.to_pylist()) if i is not None}
    held = [[position[i] for i in a if i in position] for a in answers.answers]
    # 2. sizes: the pad length l, the estimated 90th percentile of |answer ∩ C|.
    sizes = np.minimum([len(h) for h in held], SIZE_CAP)[codes[group == 1]]
    size_counts, _ = _estimates(sizes, epsilon, SIZE_CAP + 1, rng)
    shares_by_size = project_to_simplex(size_counts / max(len(sizes), 1), 1.0)
    pad = max(1, int(np.searchsorted(np.cumsum(shares_by_size), PERCENTILE)))
    boost = undercount_correction(shares_by_size, pad)
    # 3. items among the candidates, padded to l.
    c = len(candidates)
    item_values = _padded_sample(held, codes[group == 2], pad, c, rng)
    item_estimates, item_protocol = _estimates(item_values, epsilon, c + 1, rng)
    items = [
        Hit(candidates[i], e, m)
        for i, e, m in _top(
            item_estimates[:c],
            len(item_values),
            boost,
            pad,
            shares[2],
            epsilon,
            item_protocol,
            n,
            top,
            confidence,
        )
    ]
    # 4. pairs of candidates, padded to l(l − 1)/2.
    pairs: list[PairHit] = []
    if c >= 2:
        pair_ids = {p: k for k, p in enumerate(itertools.combinations(range(c), 2))}
        pad_pairs = max(1, pad * (pad - 1) // 2)
        held_pairs = [[pair_ids[p] for p in itertools.combinations(sorted(h), 2)] for h in held]
        pair_values = _padded_sample(held_pairs, codes[group == 3], pad_pairs, len(pair_ids), rng)
        d = len(pair_ids) + 1
        pair_estimates, pair_protocol = _estimates(pair_values, epsilon, d, rng)
        names = list(pair_ids)
        pairs = [
            PairHit(_pair(candidates[names[k][0]], candidates[names[k][1]]), e, m)
            for k, e, m in _top(
                pair_estimates[: d - 1],
                len(pair_values),
                1.0,
                pad_pairs,
                shares[3],
                epsilon,
                pair_protocol,
                n,
                top,
                confidence,
            )
        ]
    near_zero = boost * _sd_near_zero(item_protocol, epsilon, c + 1, margin_rows(n), pad, shares[2])
    moe = normal_quantile(confidence) * near_zero
    return Itemsets(epsilon, confidence, max_length, pad, tuple(items), tuple(pairs), moe, n)


def true_counts(answers: SetAnswers) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """CONFIDENTIAL: every item's and every pair's true count (for precision and recall)."""
    per_answer = np.bincount(answers.codes, minlength=len(answers.answers))
    items: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for answer, count in zip(answers.answers, per_answer.tolist(), strict=True):
        if not count:
            continue
        names = sorted(answers.items[i] for i in answer)
        for name in names:
            items[name] += count
        for pair in itertools.combinations(names, 2):
            pairs[pair] += count
    return items, pairs
