"""Issue 38.7: the degree histogram's 95% margin is the exact quantile of the discrete noise
drawn, the smallest whole m with P(|noise| ≤ m) ≥ 95% (it was one count wider: 13 at ε = 1,
1 at ε = 100)."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pytest

from dprelease.accounting.mechanisms import Noise
from dprelease.errors import InternalError
from dprelease.graph.edges import edge_list
from dprelease.graph.release import DegreeQuery, exact_margin, uncharged_degree_release


def coverage(scale: float, m: int) -> float:
    """P(|X| ≤ m) for the discrete Laplace of scale b, summed from its mass function
    P(x) = (1 − q)/(1 + q)·q^|x|, q = e^(−1/b): an oracle independent of the margin's formula."""
    q = math.exp(-1 / scale)
    return math.fsum((1 - q) / (1 + q) * q ** abs(x) for x in range(-m, m + 1))


def test_epsilon_1_gives_12_which_covers_95_percent():
    query = DegreeQuery(epsilon=1.0, max_degree=10)  # edge-DP: Δ₁ = 4, b = 4
    assert query.moe == 12
    assert coverage(query.noise.scale, 12) >= 0.95  # 95.6%
    assert coverage(query.noise.scale, 11) < 0.95


def test_epsilon_100_gives_0_the_noise_is_almost_always_0():
    query = DegreeQuery(epsilon=100.0, max_degree=10)
    assert query.moe == 0
    assert coverage(query.noise.scale, 0) >= 0.95


@pytest.mark.parametrize("node_dp", [False, True])
@pytest.mark.parametrize(
    "epsilon", [0.01, 0.05, 0.1, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 20.0, 100.0]
)
def test_the_margin_is_the_smallest_that_covers_95_percent(epsilon: float, node_dp: bool):
    for max_degree in (1, 3, 10, 50):
        query = DegreeQuery(epsilon=epsilon, max_degree=max_degree, node_dp=node_dp)
        m = query.moe
        assert coverage(query.noise.scale, m) >= 0.95
        assert m == 0 or coverage(query.noise.scale, m - 1) < 0.95


def test_the_files_write_the_exact_margin():
    pairs = [("hub", f"leaf{i}") for i in range(30)]
    edges = edge_list(pa.table({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]}), "t")
    published = uncharged_degree_release(edges, DegreeQuery(epsilon=1.0, max_degree=4))
    assert json.loads(published.files["metadata.json"])["moe_95"] == 12
    rows = published.files["degree_histogram.csv"].decode().splitlines()[1:]
    assert {row.rsplit(",", 1)[1] for row in rows} == {"12"}


def test_a_continuous_noise_has_no_whole_number_margin():
    with pytest.raises(InternalError):
        exact_margin(Noise("gaussian", 1.0), 0.05)
