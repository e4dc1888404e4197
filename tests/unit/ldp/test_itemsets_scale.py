"""Issue 35, finding 7: `ldp itemsets` grew with the distinct items (2,000 answers of 1,000
items: 30 s and 782 MB; 54 MB: out of memory at 3 GB). Now the items are parsed whole
columns at a time, the prefix search encodes only the items respondents sent, a long answer
no longer widens every answer's sampling table, and a column over the limit is refused in
one line before any item is parsed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dprelease.ldp.base import LdpError
from dprelease.ldp.itemsets import frequent_itemsets, parse_answers
from dprelease.limits import LDP_ITEMSETS_MAX_MB


def _answers(rows: int, items: int, seed: int = 1) -> list[str | None]:
    rng = np.random.default_rng(seed)
    words = np.char.add("item", rng.integers(0, 10**6, (rows, items)).astype(str))
    return [";".join(row) for row in words.tolist()]


@pytest.mark.slow
def test_two_thousand_answers_of_a_thousand_distinct_items_take_seconds():
    texts = _answers(2_000, 1_000)
    started = time.process_time()
    answers = parse_answers(texts, np.arange(len(texts)), "langs", 16)
    result = frequent_itemsets(answers, 2.0, rng=np.random.default_rng(3))
    # CPU of every thread (arrow's too): 3.4 s alone, 11 s beside the suite's other worker;
    # before the fix, 30 s of one thread alone
    assert time.process_time() - started < 20
    assert len(answers.items) > 800_000 and result.pad_length >= 1


def test_one_long_answer_does_not_widen_every_answers_table():
    """One answer of 300,000 items beside 2,000 short ones: a table as wide as the longest
    answer was 2,001 × 300,000 × 8 bytes (4.8 GB) before."""
    long = ";".join(f"w{i}" for i in range(300_000))
    texts: list[str | None] = [long, *(f"a;b;c{i}" for i in range(7))]
    codes = np.array([0, *(1 + i % 7 for i in range(2_000))])
    answers = parse_answers(texts, codes, "langs", 16)
    result = frequent_itemsets(answers, 4.0, rng=np.random.default_rng(5))
    assert {hit.value for hit in result.items} & {"a", "b"}


def test_a_column_over_the_limit_is_refused_in_one_line_before_parsing():
    size = LDP_ITEMSETS_MAX_MB * 1_000_000 // 4 + 1
    texts: list[str | None] = ["x" * size + str(i) for i in range(4)]
    started = time.process_time()
    with pytest.raises(
        LdpError,
        match=rf"^The distinct answers of column 'langs' hold .* at most {LDP_ITEMSETS_MAX_MB} MB",
    ) as refused:
        parse_answers(texts, np.arange(4), "langs", 16)
    assert "\n" not in str(refused.value)
    assert time.process_time() - started < 2


def test_items_cut_to_the_same_bytes_are_one_item():
    texts: list[str | None] = ["abcdefgh1; abcdefgh2", "abcdefgh3;zz"]
    answers = parse_answers(texts, np.arange(2), "c", 8)
    assert answers.items == ("abcdefgh", "zz")
    assert answers.answers == ((0,), (0, 1), ())
