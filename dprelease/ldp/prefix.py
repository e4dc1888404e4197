"""Strings as fixed-width byte rows, their prefixes as 64-bit fingerprints, and the scaled
variance of an estimate made from a random share of the respondents.

A value is its UTF-8 bytes, cut to `max_length` bytes and padded with 0xFF (a byte that never
occurs in UTF-8, so "abc" and "abcd" differ at their fourth byte: 0xFF against "d"). The
prefix of length s is fingerprinted by a rolling SplitMix64 hash, h_0 = SEED,
h_s = mix(h_{s−1} + (b_s + 1)·golden): the respondent and the aggregator compute the same
fingerprints, and the aggregator can extend a prefix by one byte without knowing any value.
Two distinct prefixes share a fingerprint with probability 2^−64.
"""

from __future__ import annotations

import math

import numpy as np

from dprelease.errors import quote
from dprelease.ldp.base import LdpError, Support

PAD = 0xFF  # never a UTF-8 byte: the end of a value, and its padding
SEED = np.uint64(0x243F6A8885A308D3)  # the fingerprint of the empty prefix (π's digits)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
MAX_LENGTH = 64  # bytes: each byte is a round of the prefix search, and a share of users


def check_max_length(max_length: int) -> int:
    if isinstance(max_length, bool) or not isinstance(max_length, int | np.integer):
        raise LdpError(
            f"The maximum length must be a whole number of bytes, got {quote(max_length)}."
        )
    if not 1 <= max_length <= MAX_LENGTH:
        raise LdpError(
            f"The maximum length must be from 1 to {MAX_LENGTH} bytes, got {quote(max_length)}."
        )
    return int(max_length)


def encode(texts: list[str], max_length: int) -> np.ndarray:
    """Each text as a row of `max_length` bytes (uint8): UTF-8, cut, padded with 0xFF."""
    rows = np.full((len(texts), max_length), PAD, dtype=np.uint8)
    for i, text in enumerate(texts):
        raw = text.encode("utf-8")[:max_length]
        rows[i, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return rows


def decode(row: np.ndarray) -> str:
    """The text of a byte row (padding dropped; a character cut at the end shows as �)."""
    raw = bytes(row.astype(np.uint8).tolist())
    return raw.split(bytes([PAD]), 1)[0].decode("utf-8", errors="replace")


def extend(fingerprints: np.ndarray, next_bytes: np.ndarray) -> np.ndarray:
    """h_s = mix(h_{s−1} + (b_s + 1)·golden), broadcast over both arguments."""
    with np.errstate(over="ignore"):
        z = fingerprints + (next_bytes.astype(np.uint64) + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def prefix_fingerprints(rows: np.ndarray) -> np.ndarray:
    """Column s − 1 holds the fingerprint of each row's prefix of length s."""
    out = np.empty(rows.shape, dtype=np.uint64)
    current = np.full(rows.shape[0], SEED, dtype=np.uint64)
    for s in range(rows.shape[1]):
        current = extend(current, rows[:, s])
        out[:, s] = current
    return out


def sampled_variance(
    support: Support, n: int, count: float, pad: int = 1, share: float = 1.0
) -> float:
    """Var of the estimate (pad/share)·ĉ of a value held by `count` of n respondents, when each
    respondent joins the reporting group with probability `share` and reports one of its
    items, each with probability 1/pad (heavy hitters: pad = 1, share = 1/levels).

    Per respondent i, X_i = (pad/share)·B_i·(S_i − q)/(p − q), B_i ~ Bernoulli(share), S_i the
    report's support of v (P = p if the item reported is v, q otherwise), a_i = P(item is v)
    = 1/pad for a holder. E[X_i] = 1[i holds v], and summing Var[X_i] = E[X_i²] − E[X_i]²:

        Var = pad²/(share·(p−q)²)·(n·q(1−q) + (count/pad)·(p(1−p) − q(1−q) + (p−q)²)) − count

    exact when every holder of v has at most `pad` items (a larger set is sampled at a lower
    rate, so its holders are counted short: documented, not corrected).
    """
    p, q = support.p, support.q
    count = max(float(count), 0.0)
    spread = n * q * (1 - q) + (count / pad) * (p * (1 - p) - q * (1 - q) + (p - q) ** 2)
    return max(pad**2 * spread / (share * (p - q) ** 2) - count, 0.0)


def noise_bound(support: Support, reports: int, compared: int, alpha: float) -> float:
    """The smallest raw estimate ĉ = (I − m·q*)/(p − q*) that `compared` values held by no
    one all stay below with probability ≥ 1 − alpha.

    The support count I of a value held by no one is Binomial(m, q*) (each report supports
    it with probability q*, independently). Bernstein's inequality for a sum of m variables
    in [0, 1] with variance v = m·q*(1−q*): P(I − m·q* ≥ s) ≤ exp(−s²/(2(v + s/3))). Setting
    the right side to alpha/compared (a union bound over the candidates), with
    λ = ln(compared/alpha): s = λ/3 + √(λ²/9 + 2λv). Valid for every m, unlike a normal
    approximation (a single report would pass it at small n).
    """
    lam = math.log(max(compared, 1) / alpha)
    spread = reports * support.q * (1 - support.q)
    excess = lam / 3 + math.sqrt(lam**2 / 9 + 2 * lam * spread)
    return excess / (support.p - support.q)
