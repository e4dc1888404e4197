"""Graphs (issue 28, part 3): reading an edge list, degrees, the node-DP projection and its
sensitivity, k-degree anonymity and the greedy anonymisation."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from dprelease.data.read import SizeLimits
from dprelease.errors import DataError
from dprelease.graph.anonymity import (
    anonymise_degrees,
    anonymise_graph,
    k_degree,
    measure_degree_risk,
    unique_nodes,
)
from dprelease.graph.degrees import (
    degree_histogram,
    edge_dp_sensitivity,
    node_dp_sensitivity,
    project,
)
from dprelease.graph.edges import EdgeList, edge_list, read_edges

# An e-mail graph in the spirit of the notes' (seed 001): Cathy alone has degree 5.
NOTES_GRAPH = (
    b"from,to\nAlice,Bob\nAlice,Cathy\nAlice,Ed\nCathy,Bob\nCathy,Dave\nCathy,Fred\n"
    b"Cathy,Gina\nBob,Ed\nDave,Fred\nGina,Fred\n"
)


def graph(pairs: list[tuple[object, object]]) -> EdgeList:
    table = pa.table({"a": [str(p[0]) for p in pairs], "b": [str(p[1]) for p in pairs]})
    return edge_list(table, "test")


# --- reading --------------------------------------------------------------------------------


def test_notes_graph_degrees_and_repeats_merged():
    edges = read_edges(NOTES_GRAPH + b"Bob,Alice\nAlice,Bob\n", filename="mail.csv")
    assert (edges.nodes, edges.edges, edges.merged, edges.rows) == (7, 10, 2, 12)
    degree = dict(zip(edges.labels.to_pylist(), edges.degrees().tolist(), strict=True))
    assert degree == {"Alice": 3, "Bob": 3, "Cathy": 5, "Dave": 2, "Ed": 2, "Fred": 3, "Gina": 2}
    assert (edges.first < edges.second).all()
    assert "Alice" not in repr(edges)


def test_node_text_is_trimmed_and_other_columns_ignored():
    edges = read_edges(b"a,b,weight\n 1 ,2,0.5\n2, 3,1\n", filename="e.csv")
    assert edges.labels.to_pylist() == ["1", "2", "3"]
    assert edges.edges == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"a,b\nx,y\ny,y\n", "Row 2 of 'e.csv' is a self-loop"),
        (b"only\nx\ny\n", "'e.csv' has one column; an edge list needs two"),
        (b"", "is empty"),
        (b"a,b\n", "no rows of data"),
        (b"a,b\nx,\n", "Row 1 of 'e.csv' has an empty end node"),
    ],
)
def test_bad_edge_lists_are_one_line_errors_without_node_names(content, expected):
    with pytest.raises(DataError) as error:
        read_edges(content, filename="e.csv")
    message = str(error.value)
    assert expected in message
    assert "\n" not in message
    assert "'y'" not in message and "'x'" not in message


def test_huge_edge_list_is_refused_by_the_row_limit():
    content = b"a,b\n" + b"".join(f"{i},{i + 1}\n".encode() for i in range(50))
    with pytest.raises(DataError, match="more than 10 rows"):
        read_edges(content, filename="e.csv", limits=SizeLimits(max_rows=10))


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_edges(tmp_path / "none.csv")


def test_fingerprint_sees_every_row_like_release_does():
    from dprelease.data.fingerprint import fingerprint_table
    from dprelease.data.read import read_data

    edges = read_edges(NOTES_GRAPH, filename="mail.csv")
    assert edges.fingerprint == fingerprint_table(read_data(NOTES_GRAPH, filename="mail.csv"))
    assert edges.fingerprint.rows == 10


# --- degrees and the projection -------------------------------------------------------------


def test_histogram_bins_one_to_d_with_top_bin():
    degrees = np.array([0, 1, 1, 2, 5, 9])
    assert degree_histogram(degrees, 3).tolist() == [2, 1, 2]  # 0 not counted; 5, 9 → "3+"
    assert degree_histogram(degrees, 9).tolist() == [2, 1, 0, 0, 1, 0, 0, 0, 1]


def naive_projection(edges: EdgeList, bound: int) -> np.ndarray:
    """The edge-addition projection written plainly: every edge in order."""
    kept = np.zeros(edges.nodes, dtype=np.int64)
    for a, b in zip(edges.first.tolist(), edges.second.tolist(), strict=True):
        if kept[a] < bound and kept[b] < bound:
            kept[a] += 1
            kept[b] += 1
    return kept


def random_graph(rng: np.random.Generator, nodes: int, p: float) -> list[tuple[int, int]]:
    return [(a, b) for a, b in itertools.combinations(range(nodes), 2) if rng.random() < p]


def test_projection_matches_the_plain_algorithm():
    rng = np.random.default_rng(7)
    for _ in range(60):
        pairs = random_graph(rng, int(rng.integers(3, 25)), float(rng.uniform(0.1, 0.9)))
        if not pairs:
            continue
        edges = graph(pairs)
        bound = int(rng.integers(1, 6))
        projected = project(edges, bound)
        assert projected.tolist() == naive_projection(edges, bound).tolist()
        assert projected.max() <= bound


def l1(g: EdgeList, h: EdgeList, bound: int, node_dp: bool) -> int:
    def hist(e: EdgeList) -> np.ndarray:
        return degree_histogram(project(e, bound) if node_dp else e.degrees(), bound)

    return int(np.abs(hist(g) - hist(h)).sum())


def test_node_dp_sensitivity_holds_on_random_and_adversarial_neighbours():
    """Adding a node with any edges moves the projected histogram by at most 2D + 1 (a
    search over 3,000 such pairs found exactly 2, 5, 7, 9 for D = 1 … 4: the bound is met for
    D ≥ 2; with D = 1 the single bin moves by 2)."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        nodes = int(rng.integers(2, 16))
        pairs = random_graph(rng, nodes, float(rng.uniform(0.1, 0.9)))
        hub = nodes if trial % 2 else -1  # the new node sorts last or first among the names
        joined = [int(v) for v in rng.permutation(nodes)[: int(rng.integers(1, nodes + 1))]]
        bigger = pairs + [(hub, v) for v in joined]
        if not pairs:
            continue
        bound = int(rng.integers(1, 5))
        change = l1(graph(pairs), graph(bigger), bound, node_dp=True)
        assert change <= node_dp_sensitivity(bound), (pairs, joined, bound)


@pytest.mark.parametrize("bound", [2, 3, 5])
def test_node_dp_sensitivity_is_reached(bound):
    """A new node joined to D nodes of degree 1 (and to more, beyond the bound): each of the
    D moves from bin 1 to bin 2 (2 each), and the new node lands in bin D (1)."""
    pairs = [(f"u{i}", f"w{i}") for i in range(bound + 3)]
    bigger = pairs + [("a-new", f"u{i}") for i in range(bound + 3)]
    assert l1(graph(pairs), graph(bigger), bound, node_dp=True) == node_dp_sensitivity(bound)


def test_edge_dp_sensitivity_holds_with_and_without_projection():
    rng = np.random.default_rng(5)
    for _ in range(120):
        pairs = random_graph(rng, int(rng.integers(3, 14)), float(rng.uniform(0.2, 0.8)))
        if len(pairs) < 2:
            continue
        gone = int(rng.integers(len(pairs)))
        smaller = pairs[:gone] + pairs[gone + 1 :]
        bound = int(rng.integers(1, 6))
        for node_dp in (False, True):
            assert l1(graph(pairs), graph(smaller), bound, node_dp) <= edge_dp_sensitivity()


def test_sensitivity_is_reached_under_edge_dp():
    # 1–2, 3–4–5: adding 2–3 moves 2 from degree 1 to 2 and 3 from 1 to 2: L1 = 4.
    before = graph([(1, 2), (3, 4), (4, 5)])
    after = graph([(1, 2), (3, 4), (4, 5), (2, 3)])
    assert l1(before, after, 5, node_dp=False) == 4


# --- k-degree anonymity ---------------------------------------------------------------------


def test_notes_graph_risk():
    risk = measure_degree_risk(read_edges(NOTES_GRAPH, filename="mail.csv"), 2)
    # degrees: 2 ×3 (Dave, Ed, Gina), 3 ×3 (Alice, Bob, Fred), 5 ×1 (Cathy)
    assert (risk.k, risk.nodes, risk.edges, risk.unique_by_degree) == (1, 7, 10, 1)
    assert risk.below_target == 1 and risk.max_degree == 5 and risk.degrees == 3
    a = risk.anonymisation
    assert a.k_after >= 2 and a.degree_raise == 2 * a.edges_to_add
    assert a.constructed is True  # Fred raised by 2, with Alice and Bob (test_small_supergraph)
    assert a.edges_to_add >= a.edges_lower_bound == 1


def test_the_edges_found_reach_the_degrees_reported():
    edges = read_edges(NOTES_GRAPH, filename="mail.csv")
    found = anonymise_graph(edges, 2)
    assert found.rounds >= 1 and found.added is not None
    now = edges.degrees() + np.bincount(np.array(found.added).ravel(), minlength=edges.nodes)
    assert now.tolist() == found.target.tolist() and k_degree(now) >= 2


def test_unique_nodes_names_only_the_nodes_alone_in_their_degree():
    assert unique_nodes(read_edges(NOTES_GRAPH, filename="mail.csv"), 5) == [("Cathy", 5)]


def test_greedy_anonymisation_reaches_k_on_random_sequences():
    rng = np.random.default_rng(3)
    for _ in range(300):
        degrees = rng.integers(1, 30, size=int(rng.integers(2, 80)))
        degrees[0] += degrees.sum() % 2  # a graph's degrees sum to an even number
        k = int(rng.integers(1, min(8, degrees.size) + 1))
        target = anonymise_degrees(degrees, k)
        assert (target >= degrees).all()
        assert k_degree(target) >= k
        assert int((target - degrees).sum()) % 2 == 0


def test_greedy_beats_raising_whole_classes():
    # 5, 4, 4, 4 with k = 2: raise one 4 to 5 (cost 1), not every 4 (cost 3).
    target = anonymise_degrees(np.array([5, 4, 4, 4, 1, 1, 1, 1]), 2)
    assert sorted(target.tolist(), reverse=True)[:4] == [5, 5, 4, 4]


def test_k_larger_than_the_graph_is_a_one_line_error():
    with pytest.raises(DataError, match="more than the graph's nodes"):
        anonymise_degrees(np.array([1, 1]), 3)


def test_added_edges_are_new_and_make_the_graph_k_degree_anonymous():
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(100):
        pairs = random_graph(rng, int(rng.integers(6, 30)), float(rng.uniform(0.05, 0.4)))
        if len(pairs) < 3:
            continue
        edges = graph(pairs)
        k = 3 if edges.nodes >= 3 else 1
        found = anonymise_graph(edges, k)
        if found.added is None:
            continue
        added = found.added
        existing = set(zip(edges.first.tolist(), edges.second.tolist(), strict=True))
        assert len(set(added)) == len(added) and not existing & set(added)
        assert all(a < b for a, b in added)
        degrees = edges.degrees()
        now = degrees + np.bincount(np.array(added, dtype=np.int64).ravel(), minlength=edges.nodes)
        assert now.tolist() == found.target.tolist() and k_degree(now) >= k
        checked += 1
    assert checked > 90


def test_parquet_numbers_and_a_missing_end_node(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3], "b": [2, 3, 1]}), path)
    edges = read_edges(path)
    assert edges.labels.to_pylist() == ["1", "2", "3"] and edges.edges == 3
    pq.write_table(pa.table({"a": [1, 2, None], "b": [2, 3, 1]}), path)
    with pytest.raises(DataError, match=r"Row 3 of 'e\.parquet' has an empty end node"):
        read_edges(path)
