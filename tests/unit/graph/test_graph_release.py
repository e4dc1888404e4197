"""The DP degree histogram (issue 28, part 3): its query, post-processing, files (no true
figure) and its charge to the ledger (refused without a fingerprint, or over the cap)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pyarrow as pa
import pytest

from dprelease.data.fingerprint import RecordFingerprint
from dprelease.errors import BudgetError, DataError
from dprelease.graph.edges import edge_list
from dprelease.graph.release import (
    DegreeQuery,
    charged_degree_release,
    draw_degree_release,
    true_histogram,
    uncharged_degree_release,
)
from dprelease.release import service
from dprelease.release.publish import Account


def star_and_path():
    """A star of 30 leaves and a path of 40 nodes: 70 edges, 71 nodes."""
    pairs = [("hub", f"leaf{i}") for i in range(30)] + [(f"p{i}", f"p{i + 1}") for i in range(40)]
    table = pa.table({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]})
    return edge_list(table, "test")


@pytest.mark.parametrize(
    ("epsilon", "max_degree", "error"),
    [
        (0.0, 5, BudgetError),
        (-1.0, 5, BudgetError),
        (math.nan, 5, BudgetError),
        (101.0, 5, BudgetError),
        (1.0, 0, DataError),
        (1.0, 10_001, DataError),
    ],
)
def test_query_refuses_bad_parameters(epsilon, max_degree, error):
    with pytest.raises(error):
        DegreeQuery(epsilon=epsilon, max_degree=max_degree)


def test_noise_scale_is_the_sensitivity_over_epsilon():
    edge = DegreeQuery(epsilon=0.5, max_degree=10)
    node = DegreeQuery(epsilon=0.5, max_degree=10, node_dp=True)
    assert (edge.sensitivity, edge.noise.scale) == (4, 8.0)
    assert (node.sensitivity, node.noise.scale) == (21, 42.0)


def test_true_histograms_edge_and_node_dp():
    edges = star_and_path()
    edge = true_histogram(edges, DegreeQuery(epsilon=1.0, max_degree=5))
    assert edge.tolist() == [32, 39, 0, 0, 1]  # leaves and path ends; path inside; hub "5+"
    node = true_histogram(edges, DegreeQuery(epsilon=1.0, max_degree=3, node_dp=True))
    # the hub keeps 3 edges (the first leaves in name order); 27 leaves keep none
    assert node.tolist() == [3 + 2, 39, 1]


def test_release_is_a_valid_distribution():
    query = DegreeQuery(epsilon=0.2, max_degree=8)
    release = draw_degree_release(np.array([0, 0, 1, 500, 0, 0, 0, 3]), query)
    assert release.counts.dtype == np.int64 and (release.counts >= 0).all()
    assert release.counts.size == 8
    assert release.released_nodes == int(release.counts.sum())
    assert math.isclose(release.shares.sum(), 1.0)
    rows = release.rows()
    assert [r["degree"] for r in rows] == list(range(1, 9))
    assert rows[-1]["degree_label"] == "8 or more"


def test_files_hold_public_parameters_and_released_counts_only():
    published = uncharged_degree_release(
        star_and_path(), DegreeQuery(epsilon=1.0, max_degree=4, node_dp=True)
    )
    meta = json.loads(published.files["metadata.json"])
    assert set(meta) == {
        "kind",
        "privacy_unit",
        "epsilon",
        "delta",
        "max_degree",
        "bins",
        "projection",
        "sensitivity_l1",
        "mechanism",
        "noise_scale",
        "moe_95",
        "released_nodes",
        "postprocess",
        "files",
        "ledger",
    }
    assert meta["ledger"] is None and meta["privacy_unit"] == "node"
    assert (
        meta["sensitivity_l1"] == 9 and meta["released_nodes"] == published.release.released_nodes
    )
    csv_lines = published.files["degree_histogram.csv"].decode().splitlines()
    assert csv_lines[0] == "degree,degree_label,count,share,moe"
    assert len(csv_lines) == 5
    assert b"hub" not in published.files["degree_histogram.csv"]


def numbers_in(text: bytes | str) -> set[int]:
    """Every whole number written in `text`, digits grouped or not (1,237  1 237  1237.0)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    found = re.findall(r"(?<![\w.])\d{1,3}(?:[,\u00a0\u202f' _]\d{3})+(?![\w])|\d+", text)
    return {int(re.sub(r"\D", "", token)) for token in found}


def account(edges):
    return service.account_of(service.open_ledger(), edges.fingerprint, "network", None)


def test_charged_release_spends_epsilon_once():
    edges = star_and_path()
    chosen = account(edges)
    published = charged_degree_release(
        edges, DegreeQuery(epsilon=0.7, max_degree=6), chosen, release_id="g1"
    )
    assert published.entry is not None and published.entry.epsilon == pytest.approx(0.7)
    balance = chosen.ledger.balance(service.resolve_account(chosen).key)
    assert balance.spent_epsilon == pytest.approx(0.7) and balance.releases == 1
    meta = json.loads(published.files["metadata.json"])
    assert meta["ledger"] == {"release_id": "g1", "dataset": "network"}
    entry = chosen.ledger.entries(service.resolve_account(chosen).key)[0]
    assert entry.label == "degree histogram (edge-DP, D = 6)"


def test_an_account_whose_fingerprint_saw_no_edges_is_refused():
    edges = star_and_path()
    blind = Account(service.open_ledger(), RecordFingerprint(), "network")
    with pytest.raises(DataError, match="saw no records"):
        charged_degree_release(edges, DegreeQuery(epsilon=1.0, max_degree=5), blind, release_id="x")
    assert blind.ledger.find("x") is None


def test_over_the_cap_nothing_is_charged_or_drawn():
    edges = star_and_path()
    chosen = account(edges)
    service.set_cap(chosen, 0.5)
    with pytest.raises(BudgetError):
        charged_degree_release(
            edges, DegreeQuery(epsilon=1.0, max_degree=5), chosen, release_id="y"
        )
    assert chosen.ledger.find("y") is None


def test_a_risk_read_without_fingerprint_cannot_be_charged(tmp_path):
    from dprelease.graph.edges import read_edges

    path = tmp_path / "e.csv"
    path.write_text("a,b\nx,y\ny,z\n")
    edges = read_edges(path, fingerprint=False)
    with pytest.raises(DataError, match="saw no records"):
        charged_degree_release(
            edges, DegreeQuery(epsilon=1.0, max_degree=5), account(edges), release_id="z"
        )


def test_cli_files_and_output_hold_no_true_number(tmp_path, capsys, monkeypatch):
    """A star of 2,345 leaves and a path of 1,100 nodes: every true figure (nodes, edges,
    degree counts, the hub's degree) is a distinctive number above D = 1,000; with the noise
    replaced by a constant 7, none of them may appear in any file or line of output."""
    from dprelease.cli import main
    from dprelease.graph import release as graph_release

    leaves, path_nodes = 2345, 1100
    lines = [f"hub,leaf{i}" for i in range(leaves)]
    lines += [f"p{i},p{i + 1}" for i in range(path_nodes - 1)]
    edges_file = tmp_path / "net.csv"
    edges_file.write_text("a,b\n" + "\n".join(lines) + "\n")
    true = {leaves + path_nodes + 1, leaves + path_nodes - 1, leaves, leaves + 2, path_nodes - 2}
    monkeypatch.setattr(
        graph_release,
        "secure_noisy_counts",
        lambda counts, noise, l1, l2: np.full(counts.shape, 7, dtype=np.int64),
    )
    for node_dp in ([], ["--node-dp"]):
        out = tmp_path / f"out{len(node_dp)}"
        args = ["graph", str(edges_file), "--degree-histogram", "--epsilon", "1"]
        assert main([*args, "--max-degree", "1000", *node_dp, "--out", str(out)]) == 0
        printed = capsys.readouterr()
        seen = numbers_in(printed.out) | numbers_in(printed.err)
        for file in out.iterdir():
            seen |= numbers_in(file.read_bytes())
        assert not seen & true
        assert 7000 in seen  # the search sees numbers: 1,000 bins of 7
