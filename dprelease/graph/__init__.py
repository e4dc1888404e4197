"""Graphs from an edge list (issue 28, part 3): k-degree risk and a DP degree distribution.

Modules: `edges` (read an edge list into an undirected simple graph), `degrees` (histograms,
the node-DP projection and both sensitivities, derived in its docstring), `anonymity`
(CONFIDENTIAL: k-degree anonymity and the anonymisation's figures), `degree_sequence` (the
optimal k-anonymous degree sequence and the lower bounds on the edges to add), `supergraph`
(the edges added towards it, in rounds within a work bound; on a small graph the fewest
edges of several ways), `release` (the DP degree
histogram, charged to the ledger) and `command` (the `graph` CLI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dprelease._lazy import lazy_attribute

if TYPE_CHECKING:  # loaded on first use, so `import dprelease.cli` stays light
    from dprelease.graph.anonymity import DegreeRisk, measure_degree_risk, unique_nodes
    from dprelease.graph.edges import EdgeList, read_edges
    from dprelease.graph.release import (
        DegreeQuery,
        DegreeRelease,
        charged_degree_release,
        uncharged_degree_release,
    )

_HOMES = {
    "DegreeRisk": "anonymity",
    "measure_degree_risk": "anonymity",
    "unique_nodes": "anonymity",
    "EdgeList": "edges",
    "read_edges": "edges",
    "DegreeQuery": "release",
    "DegreeRelease": "release",
    "charged_degree_release": "release",
    "uncharged_degree_release": "release",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)


__all__ = [
    "DegreeQuery",
    "DegreeRelease",
    "DegreeRisk",
    "EdgeList",
    "charged_degree_release",
    "measure_degree_risk",
    "read_edges",
    "uncharged_degree_release",
    "unique_nodes",
]
