"""CONFIDENTIAL: k-degree anonymity of a graph and its degree anonymisation (seed 001).

An attacker who knows how many contacts a person has (Alice: "I e-mailed three people")
re-identifies them in a published graph without names when no other node has that degree.
A graph is **k-degree anonymous** when every degree is shared by at least k nodes; its k is the
smallest number of nodes that share a degree (Liu & Terzi, SIGMOD 2008).

The anonymisation (issue 38.5) takes the optimal k-anonymous degree sequence, Liu & Terzi's
dynamic programme (`dprelease.graph.degree_sequence`), and adds edges towards it in rounds
(`dprelease.graph.supergraph`; on a small graph the fewest edges of several ways, the greedy
this replaced among them): only added edges, never a removed one. Its least total raise,
halved, is a lower bound on the edges any anonymisation by added edges needs; the result gives
that bound and how far above it the edges found are (`edges_lower_bound`,
`edges_over_lower_bound`), so a user sees what the construction cost beyond the unavoidable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprelease.graph.degree_sequence import anonymise_degrees, edges_lower_bound
from dprelease.graph.edges import EdgeList
from dprelease.graph.supergraph import (  # re-exported: the work bound's home was here
    CONSTRUCT_MAX_WORK,
    anonymise_graph,
    construct_work,
)

__all__ = [
    "CONSTRUCT_MAX_WORK",
    "Anonymisation",
    "DegreeRisk",
    "anonymise_degrees",
    "anonymise_graph",
    "construct_work",
    "k_degree",
    "measure_degree_risk",
    "unique_nodes",
]


@dataclass(frozen=True)
class Anonymisation:
    """CONFIDENTIAL: what the degree anonymisation to `target_k` needs."""

    target_k: int
    degree_raise: int  # Σ (anonymised − original degree), even
    edges_to_add: int  # degree_raise / 2: the edges found, or the sequence's when not found
    nodes_raised: int
    k_after: int  # the k-degree of the anonymised degree sequence (≥ target_k)
    constructed: bool | None  # the edges were found; None: not searched (work bound)
    rounds: int  # optimal sequences taken, the DP re-run after a round fell short of k
    edges_lower_bound: int  # ⌈least raise of any k-anonymous sequence / 2⌉
    edges_over_lower_bound: float | None  # edges found ÷ the lower bound; None: not found

    def construction_text(self) -> str:
        """Whether the edges were found and how far above the lower bound, in words (the CLI
        and the dashboard)."""
        bound = f"{self.edges_lower_bound:,}"
        if self.constructed is None:
            return (
                "not searched for (the search would exceed its work bound; the edges to add "
                "are the optimal degree sequence's, a lower bound; any anonymisation by added "
                f"edges needs at least {bound})"
            )
        if self.constructed and self.edges_over_lower_bound is not None:
            return (
                f"found, {self.edges_over_lower_bound:.2f}× the lower bound of {bound} edges "
                "that any anonymisation by added edges needs"
            )
        return f"not found in {self.rounds} rounds (the lower bound is {bound} edges)"

    def to_dict(self) -> dict[str, object]:
        return {
            "target_k": self.target_k,
            "degree_raise": self.degree_raise,
            "edges_to_add": self.edges_to_add,
            "nodes_raised": self.nodes_raised,
            "k_after": self.k_after,
            "constructed": self.constructed,
            "rounds": self.rounds,
            "edges_lower_bound": self.edges_lower_bound,
            "edges_over_lower_bound": self.edges_over_lower_bound,
        }


@dataclass(frozen=True)
class DegreeRisk:
    """CONFIDENTIAL: the k-degree anonymity of a graph (counts only; no node is named)."""

    k: int  # the smallest number of nodes that share a degree
    nodes: int
    edges: int
    merged: int  # repeated edges read once
    degrees: int  # distinct degrees
    unique_by_degree: int  # nodes whose degree no other node has
    below_target: int  # nodes whose degree fewer than target_k nodes share
    max_degree: int
    anonymisation: Anonymisation

    def to_dict(self) -> dict[str, object]:
        return {
            "k": self.k,
            "nodes": self.nodes,
            "edges": self.edges,
            "merged_repeated_edges": self.merged,
            "distinct_degrees": self.degrees,
            "unique_by_degree": self.unique_by_degree,
            "below_target_k": self.below_target,
            "max_degree": self.max_degree,
            "anonymisation": self.anonymisation.to_dict(),
        }


def k_degree(degrees: np.ndarray) -> int:
    """The smallest number of nodes that share a degree (degrees of the nodes present)."""
    _, sizes = np.unique(degrees, return_counts=True)
    return int(sizes.min()) if sizes.size else 0


def measure_degree_risk(edges: EdgeList, target_k: int) -> DegreeRisk:
    """k-degree anonymity, the nodes unique by degree, and the anonymisation to `target_k`."""
    degrees = edges.degrees()
    values, sizes = np.unique(degrees, return_counts=True)
    share = sizes[np.searchsorted(values, degrees)]
    return DegreeRisk(
        k=int(sizes.min()),
        nodes=edges.nodes,
        edges=edges.edges,
        merged=edges.merged,
        degrees=int(values.size),
        unique_by_degree=int(np.count_nonzero(share == 1)),
        below_target=int(np.count_nonzero(share < target_k)),
        max_degree=int(values[-1]),
        anonymisation=_summary(edges, degrees, target_k),
    )


def unique_nodes(edges: EdgeList, limit: int) -> list[tuple[str, int]]:
    """CONFIDENTIAL (the data holder's own screen only): up to `limit` nodes whose degree no
    other node has, as (name, degree), the largest degrees first."""
    degrees = edges.degrees()
    values, sizes = np.unique(degrees, return_counts=True)
    alone = np.flatnonzero(sizes[np.searchsorted(values, degrees)] == 1)
    alone = alone[np.argsort(-degrees[alone], kind="stable")][:limit]
    names = edges.labels.take(alone).to_pylist()
    return [(str(name), int(degrees[i])) for name, i in zip(names, alone, strict=True)]


def _summary(edges: EdgeList, degrees: np.ndarray, target_k: int) -> Anonymisation:
    lower_bound = edges_lower_bound(degrees, target_k)
    found = anonymise_graph(edges, target_k)
    if found.added is None:  # the sequence's figures: the edges were not found
        reached = anonymise_degrees(degrees, target_k)
        added = None
    else:
        reached, added = found.target, len(found.added)
    raise_ = int((reached - degrees).sum())
    return Anonymisation(
        target_k=target_k,
        degree_raise=raise_,
        edges_to_add=raise_ // 2,
        nodes_raised=int(np.count_nonzero(reached > degrees)),
        k_after=k_degree(reached),
        constructed=(added is not None) if found.tried else None,
        rounds=found.rounds,
        edges_lower_bound=lower_bound,
        edges_over_lower_bound=None
        if added is None
        else (added / lower_bound if lower_bound else 1.0),
    )
