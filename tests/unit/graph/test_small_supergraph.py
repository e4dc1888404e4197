"""Issue 38.5: on small graphs the supergraph is never worse than the greedy it replaced
(commit b4774a9) and the notes' graph gets the optimum: the rounds let a whole degree class
move up one together, and a small graph tries other ways (the replaced greedy, tie orders of
equal degrees) within the work bound, keeping the fewest edges."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from dprelease.graph import supergraph
from dprelease.graph.anonymity import anonymise_graph, k_degree, measure_degree_risk
from dprelease.graph.degree_sequence import greedy_degrees
from dprelease.graph.edges import EdgeList, edge_list, read_edges

NOTES_GRAPH = (
    b"from,to\nAlice,Bob\nAlice,Cathy\nAlice,Ed\nCathy,Bob\nCathy,Dave\nCathy,Fred\n"
    b"Cathy,Gina\nBob,Ed\nDave,Fred\nGina,Fred\n"
)

# The edges the replaced greedy (b4774a9: greedy sequence, raised nodes joined to one another,
# probing) added on `small_graph(seed)` for seeds 0 … 199; -1: it found none, -2: no case.
OLD_EDGES = [
    4, 12, 3, 1, 5, 5, 4, 7, 2, 10, 6, 2, 6, 3, -1, 8, 5, 9, 4, 9, 2, 2, 3, 5, 2, 0, 4, 1, 8, 5,
    0, 4, 3, -1, 2, 5, 2, 5, 2, 6, 5, 6, 7, 3, 1, 4, 2, -1, 1, 3, 8, 6, -1, 3, 2, 10, 6, -1, 3, 9,
    0, 3, 5, -1, 5, 1, 14, 3, 5, 2, 8, 3, 3, 5, 3, 2, 6, 5, 5, 1, 4, 0, 20, 1, 9, 1, 8, 7, 8, 3,
    6, 2, 2, 8, -1, 9, 7, 1, -1, 3, 6, 6, 3, 2, 13, 8, 3, 1, 3, 4, 7, 3, 1, 0, 2, 9, 6, 6, 10, 13,
    6, 3, 6, -2, 15, 6, 3, 2, 6, 6, 1, 5, 4, 4, 8, 2, 2, 10, 4, 6, 8, 10, -2, 4, 6, 1, 5, 9, -1, 0,
    4, 4, 2, 4, 7, 6, 2, 2, 8, 6, 4, -1, 0, 6, 3, 6, 14, 2, 0, 6, 4, 4, 3, 2, 5, 5, 2, 6, 5, -1,
    6, 10, 1, 7, 3, 3, 6, 3, 2, 2, 3, 3, 5, 6, 11, 0, 7, 6, 9, 11,
]  # fmt: skip


def as_edges(pairs: list[tuple[int, int]]) -> EdgeList:
    table = pa.table({"a": [str(a) for a, _ in pairs], "b": [str(b) for _, b in pairs]})
    return edge_list(table, "test", fingerprint=False)


def small_graph(seed: int) -> tuple[list[tuple[int, int]], int]:
    """6 to 30 nodes, edge probability 0.08 to 0.5, K = 2 … 4."""
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(6, 31)), float(rng.uniform(0.08, 0.5)), int(rng.integers(2, 5))
    a, b = np.triu_indices(n, 1)
    keep = rng.random(a.size) < p
    return list(zip(a[keep].tolist(), b[keep].tolist(), strict=True)), k


def check_supergraph(edges: EdgeList, added: list[tuple[int, int]], k: int) -> None:
    existing = set(zip(edges.first.tolist(), edges.second.tolist(), strict=True))
    assert len(set(added)) == len(added) and not existing & set(added)
    assert all(0 <= a < b < edges.nodes for a, b in added)
    now = edges.degrees() + np.bincount(
        np.array(added, dtype=np.int64).reshape(-1), minlength=edges.nodes
    )
    assert k_degree(now) >= k


def fewest_edges(edges: EdgeList, k: int, most: int) -> int:
    """Brute force: the fewest added edges that make the graph k-degree anonymous."""
    existing = set(zip(edges.first.tolist(), edges.second.tolist(), strict=True))
    missing = [p for p in itertools.combinations(range(edges.nodes), 2) if p not in existing]
    degrees = edges.degrees()
    for r in range(most + 1):
        for extra in itertools.combinations(missing, r):
            ends = np.array(extra, dtype=np.int64).reshape(-1)
            if k_degree(degrees + np.bincount(ends, minlength=edges.nodes)) >= k:
                return r
    return most + 1


def test_the_notes_graph_takes_the_fewest_edges():
    edges = read_edges(NOTES_GRAPH, filename="mail.csv")
    found = anonymise_graph(edges, 2)
    assert found.added is not None
    check_supergraph(edges, found.added, 2)
    # Fred (3) joined to Alice and Bob (3 each): 5, 5 | 4, 4 | 3 × 0 | 2, 2, 2. The greedy
    # this replaced took 3 edges, the first rounds 5.
    assert len(found.added) == fewest_edges(edges, 2, 3) == 2
    summary = measure_degree_risk(edges, 2).anonymisation
    assert summary.edges_to_add == 2 and summary.edges_lower_bound == 1
    assert summary.edges_over_lower_bound == 2.0 and summary.k_after >= 2


def test_never_more_edges_than_the_replaced_greedy_on_small_random_graphs():
    checked = fewer = total = old_total = 0
    for seed, old in enumerate(OLD_EDGES):
        pairs, k = small_graph(seed)
        if old == -2:
            assert len(pairs) < 2 or as_edges(pairs).nodes < k
            continue
        edges = as_edges(pairs)
        found = anonymise_graph(edges, k)
        assert found.added is not None, seed  # the greedy failed on 11 of them
        check_supergraph(edges, found.added, k)
        assert old == -1 or len(found.added) <= old, (seed, len(found.added), old)
        if old >= 0:
            fewer += len(found.added) < old
            total, old_total = total + len(found.added), old_total + old
        checked += 1
    # measured: 198 cases, 104 with fewer edges, 664 edges where the greedy took 897
    assert checked == 198 and fewer >= 100 and total <= 0.75 * old_total


def test_the_search_stays_within_its_work_bound(monkeypatch: pytest.MonkeyPatch):
    edges = read_edges(NOTES_GRAPH, filename="mail.csv")
    first, _ = supergraph.build(edges, 2, supergraph.Strategy(), 0)
    monkeypatch.setattr(supergraph, "SMALL_MAX_WORK", 0)  # no other way fits
    assert anonymise_graph(edges, 2).added == first.added
    monkeypatch.setattr(supergraph, "CONSTRUCT_MAX_WORK", 0)
    assert anonymise_graph(edges, 2).tried is False


def test_a_whole_class_moves_up_together():
    # at k = 2 the class of degree 3 (two spare nodes) may send both up to 4, not one
    classes = supergraph.Classes(np.array([5, 5, 3, 3]), np.array([2, 3]), 2)
    assert classes.room(3, 2) == 2 and classes.room(3, 1) == 0
    assert sorted(classes.take(2, set(), 0, forced=False)) == [2, 3]
    assert classes.count[4] == 2 and classes.count[3] == 0


def test_the_greedy_sequence_is_k_anonymous():
    rng = np.random.default_rng(5)
    for _ in range(300):
        degrees = rng.integers(0, 20, int(rng.integers(1, 40)))
        k = int(rng.integers(1, degrees.size + 1))
        target = greedy_degrees(degrees, k)
        assert (target >= degrees).all() and k_degree(target) >= k
