"""Local-DP heavy hitters and itemsets: encoding, prefix fingerprints, the search, margins,
precision and recall, and one-line errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dprelease.ldp import linear_hashing
from dprelease.ldp.base import LdpError, Support
from dprelease.ldp.heavy_hitters import (
    allowed_next,
    central_respondents,
    heavy_hitters,
    precision_recall,
    text_codes,
    true_value_counts,
)
from dprelease.ldp.prefix import (
    PAD,
    SEED,
    decode,
    encode,
    extend,
    prefix_fingerprints,
    sampled_variance,
)


def zipf_codes(values: int, n: int, seed: int) -> np.ndarray:
    weights = np.arange(1, values + 1, dtype=float) ** -1.3
    return np.random.default_rng(seed).choice(values, size=n, p=weights / weights.sum())


def test_encoding_pads_with_a_byte_utf8_never_uses_and_cuts_long_values():
    rows = encode(["ab", "Zürich", "abcdefghijk"], 8)
    assert rows.shape == (3, 8) and rows.dtype == np.uint8
    assert list(rows[0]) == [ord("a"), ord("b")] + [PAD] * 6
    assert decode(rows[1]) == "Zürich"
    assert decode(rows[2]) == "abcdefgh"
    assert decode(encode(["añ"], 2)[0]) == "a\ufffd"  # a character cut in half shows as �


def test_the_aggregator_extends_a_prefix_to_the_respondents_fingerprint():
    rows = encode(["cat", "car"], 4)
    prints = prefix_fingerprints(rows)
    step = SEED
    for s, byte in enumerate(rows[0]):
        step = extend(np.array([step]), np.array([byte]))[0]
        assert step == prints[0, s]
    assert prints[0, 1] == prints[1, 1] and prints[0, 2] != prints[1, 2]


def test_only_utf8_prefixes_are_extended_and_an_ended_value_only_ends():
    allowed = allowed_next(np.array([0, 1, 0]), np.array([False, False, True]))
    assert allowed[0, ord("a")] and allowed[0, 0xC3] and allowed[0, PAD]
    assert not allowed[0, 0x80] and not allowed[0, 0xC0] and not allowed[0, 0xF5]
    assert allowed[1, 0xA9] and not allowed[1, ord("a")] and not allowed[1, PAD]
    assert list(np.flatnonzero(allowed[2])) == [PAD]


def test_sampled_variance_is_the_exact_variance_scaled_plus_the_sampling_term():
    support = linear_hashing.probabilities(1.5)
    n, count, levels = 10_000, 700.0, 8
    expected = levels * support.variance_exact(n, count) + (levels - 1) * count
    assert sampled_variance(support, n, count, share=1 / levels) == pytest.approx(expected)
    # pad l, share 1: l²/(p−q)²·(n·q(1−q) + (c/l)(p(1−p) − q(1−q) + (p−q)²)) − c
    grr = Support(p=0.6, q=0.1)
    by_hand = 9 / 0.25 * (n * 0.09 + (count / 3) * (0.24 - 0.09 + 0.25)) - count
    assert sampled_variance(grr, n, count, pad=3) == pytest.approx(by_hand)


def test_the_planted_values_are_found_with_estimates_within_their_margins():
    words = ["apple", "banana", "kiwi", "Zürich"] + [f"w{i:04d}" for i in range(2000)]
    codes = np.concatenate(
        [np.repeat([0, 1, 2, 3], [60_000, 40_000, 25_000, 20_000]), np.arange(4, 2004)]
    )
    codes = np.concatenate([codes, np.random.default_rng(1).integers(4, 2004, 50_000)])
    result = heavy_hitters(words, codes, 4.0, top=4, max_length=8, rng=np.random.default_rng(7))
    assert [h.value for h in result.top] == ["apple", "banana", "kiwi", "Zürich"]
    truth = true_value_counts(words, codes, 8)
    for hit in result.top:
        assert abs(hit.estimate - truth[hit.value]) < hit.moe
    assert result.n == len(codes)
    assert set(result.to_dict()) >= {"top", "epsilon", "threshold"}
    assert set(result.to_dict()["top"][0]) == {"value", "estimate", "moe"}  # no true count
    assert "n" not in result.to_dict()


def test_without_a_heavy_value_nothing_stands_above_the_noise():
    codes = np.random.default_rng(3).integers(0, 50_000, 100_000)
    words = [f"v{i}" for i in range(50_000)]
    result = heavy_hitters(words, codes, 2.0, top=5, max_length=6, rng=np.random.default_rng(4))
    assert result.top == ()


def test_precision_and_recall_count_ties_at_the_kth_value():
    truth = {"a": 10, "b": 8, "c": 8, "d": 1}
    from collections import Counter

    accuracy = precision_recall(["a", "c", "d"], Counter(truth), 2)
    assert accuracy.in_true_top == (True, True, False)
    assert accuracy.precision == pytest.approx(2 / 3) and accuracy.recall == 1.0


def test_rows_without_a_value_are_left_out_and_an_empty_column_is_refused():
    texts, codes = text_codes(["x", None, " ", "y"], np.array([0, 1, 2, 3, 4, 0]), "c")
    assert texts == ["x", "y"] and list(codes) == [0, 1, 0]
    with pytest.raises(LdpError, match="has no value to report") as error:
        text_codes([None, ""], np.array([0, 1, 2]), "c")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "greater than 0"),
        ({"epsilon": 101.0}, "meaningless"),
        ({"epsilon": math.nan}, "finite"),
        ({"top": 0}, "--top"),
        ({"max_length": 0}, "maximum length"),
        ({"max_length": 65}, "maximum length"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs, message):
    arguments = {"epsilon": 1.0, "top": 3, "max_length": 4} | kwargs
    with pytest.raises(LdpError, match=message) as error:
        heavy_hitters(["a", "b"], np.array([0, 1]), **arguments)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("epsilon", [0.3, 2.0, 5.0])
def test_linear_hashing_support_counts_are_exact_for_every_value(epsilon):
    """The transform gives #{i : A_i x = y_i} for every x: checked against the direct count."""
    rng = np.random.default_rng(1)
    values = rng.integers(0, 1 << 8, 3000)
    matrices, reported = linear_hashing.randomise(values, epsilon, 8, rng)
    counts = linear_hashing.support_counts(matrices, reported, epsilon, 8)
    for x in range(1 << 8):
        hashed = linear_hashing.hash_values(matrices, np.full(len(values), x))
        assert counts[x] == np.count_nonzero(hashed == reported)


def test_linear_hashing_buckets_follow_e_to_the_epsilon_plus_one():
    assert [linear_hashing.buckets(e) for e in (0.1, 1.0, 2.0, 4.0, 9.0)] == [2, 4, 8, 64, 128]
    support = linear_hashing.probabilities(2.0)
    assert support.p / ((1 - support.p) / 7) == pytest.approx(math.exp(2.0))


def test_central_respondents_match_the_local_margin_on_a_share():
    """n_c·(share margin) = moe_c: at n_c respondents central DP's margin on a share equals
    the local one, moe/n; sensitivity l multiplies it by l."""
    from dprelease.ldp.planner import central_histogram

    moe_c = central_histogram(2.0, 0.95).moe
    n_c = central_respondents(1_000_000, 3_000.0, 2.0, 0.95)
    assert moe_c / n_c == pytest.approx(3_000.0 / 1_000_000)
    assert central_respondents(1_000_000, 3_000.0, 2.0, 0.95, 3) == pytest.approx(3 * n_c)
