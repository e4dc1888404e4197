"""Local-DP itemsets: parsing set-valued answers (';' only, refusals in one line), the pad
length and its correction, and frequent items and pairs found on planted data."""

from __future__ import annotations

import numpy as np
import pytest

from dprelease.ldp.base import LdpError
from dprelease.ldp.heavy_hitters import precision_recall
from dprelease.ldp.itemsets import (
    SEPARATOR,
    frequent_itemsets,
    parse_answers,
    split_items,
    true_counts,
    undercount_correction,
)


def test_items_are_split_on_semicolons_stripped_and_counted_once():
    assert SEPARATOR == ";"
    assert split_items(" English ;Spanish;; English;") == ("English", "Spanish")


def test_parse_maps_answers_to_item_ids_cut_to_the_maximum_length():
    answers = parse_answers(["a; bb", "bbb;a", "c"], np.array([0, 1, 2, 0]), "col", 2)
    assert answers.items == ("a", "bb", "c")  # "bbb" cut to 2 bytes is "bb"
    assert answers.answers[:3] == ((0, 1), (0, 1), (2,))
    items, pairs = true_counts(answers)
    assert items == {"a": 3, "bb": 3, "c": 1}
    assert pairs == {("a", "bb"): 3}


@pytest.mark.parametrize(
    ("texts", "indices", "message"),
    [
        (["a|b", "c"], [0, 1], "separated by ';' only"),
        (["a", " ; "], [0, 1], r"empty answer \(data row 2 is the first\)"),
        (["a"], [0, 1], r"empty answer \(data row 2"),  # a missing cell
    ],
)
def test_ambiguous_and_empty_answers_are_refused_in_one_line(texts, indices, message):
    with pytest.raises(LdpError, match=message) as error:
        parse_answers(texts, np.array(indices), "langs", 16)
    assert "\n" not in str(error.value) and "'langs'" in str(error.value)


def test_the_correction_is_one_when_no_answer_is_longer_than_the_pad():
    assert undercount_correction(np.array([0.2, 0.5, 0.3, 0.0]), 2) == 1.0
    # sizes 1 (share .5) and 2 (share .5), pad 1: Σ t·P = 1.5, seen 0.5 + 0.5·2·½ = 1
    assert undercount_correction(np.array([0.0, 0.5, 0.5]), 1) == pytest.approx(1.5)


def test_planted_items_and_pairs_are_found_with_estimates_within_their_margins():
    texts = ["English; Spanish", "English", "Spanish; French", "German"] + [
        f"x{i}" for i in range(500)
    ]
    rng = np.random.default_rng(11)
    indices = np.concatenate(
        [np.repeat([0, 1, 2, 3], [40_000, 50_000, 30_000, 10_000]), rng.integers(4, 504, 70_000)]
    )
    answers = parse_answers(texts, indices, "langs", 8)
    result = frequent_itemsets(answers, 5.0, top=3, max_length=8, rng=np.random.default_rng(5))
    items, pairs = true_counts(answers)
    assert [h.value for h in result.items] == ["English", "Spanish", "French"]
    assert precision_recall([h.value for h in result.items], items, 3).recall == 1.0
    assert result.pairs[0].items == ("English", "Spanish")
    assert {p.items for p in result.pairs} <= {("English", "Spanish"), ("French", "Spanish")}
    for hit in result.items:
        assert abs(hit.estimate - items[hit.value]) < 1.5 * hit.moe  # the correction's noise
    for pair in result.pairs:
        assert abs(pair.estimate - pairs[pair.items]) < pair.moe
    data = result.to_dict()
    assert set(data["items"][0]) == {"value", "estimate", "moe"}
    assert set(data["pairs"][0]) == {"items", "estimate", "moe"}


def test_a_handful_of_respondents_reports_nothing_above_the_noise():
    """Three answers: one report per group cannot stand above the noise (a normal threshold
    let single reports through as pairs of junk candidates)."""
    answers = parse_answers(["a;b", "c"], np.array([0, 1, 0]), "x", 16)
    for seed in range(5):
        result = frequent_itemsets(answers, 1.0, rng=np.random.default_rng(seed))
        assert result.items == () and result.pairs == ()


@pytest.mark.parametrize(("reports", "q"), [(1, 0.5), (40, 0.02), (5_000, 0.125)])
def test_the_noise_bound_holds_for_binomial_support_counts(reports, q):
    """P(ĉ ≥ bound) ≤ alpha/compared for a value held by no one (I ~ Binomial(m, q))."""
    from dprelease.ldp.base import Support
    from dprelease.ldp.prefix import noise_bound

    support = Support(p=0.7, q=q)
    bound = noise_bound(support, reports, compared=10, alpha=0.5)
    draws = np.random.default_rng(0).binomial(reports, q, 200_000)
    estimates = (draws - reports * q) / (support.p - q)
    assert np.mean(estimates >= bound) <= 0.05
