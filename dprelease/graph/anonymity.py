"""CONFIDENTIAL: k-degree anonymity of a graph and a greedy degree anonymisation (seed 001).

An attacker who knows how many contacts a person has (Alice: "I e-mailed three people")
re-identifies them in a published graph without names when no other node has that degree.
A graph is **k-degree anonymous** when every degree is shared by at least k nodes; its k is the
smallest number of nodes that share a degree (Liu & Terzi, SIGMOD 2008).

The anonymisation follows Liu & Terzi in two steps:

1. **The degree sequence** (`anonymise_degrees`): sorted from the largest, it is cut into
   groups of at least k consecutive nodes, and every node is raised to its group's largest
   degree (edges are only added, never removed). Their greedy rule: after a group's first k
   nodes, the next node joins it when (its raise to the group's degree) + (the cost of the k
   nodes after it as a group) is no more than the cost of starting a new group at it. A sum of
   raises that is odd cannot be edges (each edge adds 2); then the smallest group of an odd
   size is raised by one more. Edges to add = (sum of raises) / 2.
2. **The graph** (`construct`): the raises are realised greedily as new edges, the node with
   the largest raise left joined to the nodes with the largest raises left that it is not
   joined to yet. This can fail (a node would need an edge it already has, or more raised
   partners than there are: a hub raised by thousands among a few hundred raised nodes); then,
   as Liu & Terzi "probe", the p lowest degrees are raised by one before step 1 and the
   construction is tried again, p = 1, 2, 4, … while the work of all tries stays within
   CONSTRUCT_MAX_WORK (else the edges to add are reported as the lower bound they are). The
   result says whether the edges were found, and the p it took.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dprelease.errors import DataError
from dprelease.graph.edges import EdgeList

CONSTRUCT_MAX_WORK = 50_000_000
"""The most work all greedy constructions of one anonymisation may take together, in units
of `construct_work` (about 40 ns each here: some 2 s). One construction with R raised nodes
takes R steps, each a Python step (~1,000 units) and numpy passes over the R nodes; probing
repeats it. Measured before the bound: 300,000 edges at k = 20,000 took 190 s (issue 35).
Beyond it the edges are not searched for, and `edges_to_add` stays what it always is, a
lower bound on the edges any k-degree anonymisation by added edges needs."""


def construct_work(raised: int) -> int:
    """The estimated work of one greedy construction over `raised` nodes."""
    return raised * (1_000 + raised)


@dataclass(frozen=True)
class Anonymisation:
    """CONFIDENTIAL: what the greedy degree anonymisation to `target_k` needs."""

    target_k: int
    degree_raise: int  # Σ (anonymised − original degree), even
    edges_to_add: int  # degree_raise / 2
    nodes_raised: int
    k_after: int  # the k-degree of the anonymised degree sequence (≥ target_k)
    constructed: bool | None  # the edges were found greedily; None: not searched (work bound)
    probes: int = 0  # how many of the lowest degrees were raised by one first (probing)

    def construction_text(self) -> str:
        """Whether the edges were found, in words (the CLI and the dashboard)."""
        if self.constructed is None:
            return (
                "not searched for (the search would exceed its work bound; the edges to add "
                "are a lower bound)"
            )
        if self.constructed:
            probed = f", once the {self.probes:,} lowest degrees were raised by one (probing)"
            return "found greedily" + (probed if self.probes else "")
        return f"not found greedily (probing stopped at the {self.probes:,} lowest degrees)"

    def to_dict(self) -> dict[str, object]:
        return {
            "target_k": self.target_k,
            "degree_raise": self.degree_raise,
            "edges_to_add": self.edges_to_add,
            "nodes_raised": self.nodes_raised,
            "k_after": self.k_after,
            "constructed": self.constructed,
            "probes": self.probes,
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


def anonymise_degrees(degrees: np.ndarray, target_k: int) -> np.ndarray:
    """Liu–Terzi's greedy k-anonymous degree sequence (by node id; each ≥ its degree)."""
    n = degrees.size
    if target_k > n:
        raise DataError(
            f"k = {target_k} is more than the graph's nodes ({n:,}); no degree can be shared by "
            "that many: choose a k of at most the number of nodes."
        )
    order = np.argsort(-degrees, kind="stable")
    d = degrees[order].tolist()
    prefix = np.concatenate([[0], np.cumsum(degrees[order])]).tolist()

    def cost(i: int, j: int) -> int:  # raise positions i..j (inclusive) to d[i]
        return int((j - i + 1) * d[i] - (prefix[j + 1] - prefix[i]))

    starts = [0]
    pos = target_k
    while pos < n:
        left = n - pos
        if left < target_k:
            break  # the rest cannot form a group: they join the last one
        merge = d[starts[-1]] - d[pos]
        merge += cost(pos + 1, pos + target_k) if left > target_k else cost_rest(d, starts, pos)
        if merge > cost(pos, pos + target_k - 1):
            starts.append(pos)
            pos += target_k
        else:
            pos += 1
    sorted_target = np.empty(n, dtype=np.int64)
    bounds = [*starts, n]
    for start, end in itertools.pairwise(bounds):
        sorted_target[start:end] = d[start]
    target = np.empty(n, dtype=np.int64)
    target[order] = sorted_target
    return _even(degrees, target)


def cost_rest(d: list[int], starts: list[int], pos: int) -> int:
    """Raise of the last nodes pos+1 … n−1 into the current group (when they cannot form one)."""
    top = d[starts[-1]]
    return sum(top - value for value in d[pos + 1 :])


def _even(degrees: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Raise the smallest odd-sized group by one when the degrees' sum is odd (an edge adds 2
    to it, so the anonymised sum must be even, like the graph's own)."""
    if int(target.sum()) % 2 == 0:
        return target
    values, sizes = np.unique(target, return_counts=True)
    odd = [(int(s), int(v)) for v, s in zip(values, sizes, strict=True) if s % 2 == 1]
    # The sum is odd, so some group has an odd size; stay below n − 1 where one can.
    odd = [(s, v) for s, v in odd if v + 1 <= degrees.size - 1] or odd
    _, value = min(odd)
    raised = target.copy()
    raised[target == value] += 1
    return raised


@dataclass(frozen=True)
class Anonymised:
    """CONFIDENTIAL: the anonymised degrees (by node id), the new edges (None: not found or
    not tried) and the probes it took."""

    target: np.ndarray
    added: list[tuple[int, int]] | None
    probes: int
    tried: bool = True  # False: the search's work bound stopped it before the first try


def anonymise_graph(edges: EdgeList, target_k: int) -> Anonymised:
    """Anonymise the degree sequence, then find the edges; when the greedy construction gets
    stuck, probe (Liu & Terzi): raise the p lowest degrees by one before anonymising, for
    p = 1, 2, 4, …, and keep the first sequence whose edges are found. `added` is None when
    none was found within CONSTRUCT_MAX_WORK (`tried` False: not even the first was tried)."""
    degrees = edges.degrees()
    lowest = np.argsort(degrees, kind="stable")
    first = anonymise_degrees(degrees, target_k)
    probes = spent = 0
    while probes <= degrees.size:
        sequence = degrees.copy()
        sequence[lowest[:probes]] += 1
        target = anonymise_degrees(sequence, target_k) if probes else first
        spent += construct_work(int(np.count_nonzero(target > degrees)))
        if spent > CONSTRUCT_MAX_WORK:
            break
        added = construct(edges, target - degrees)
        if added is not None:
            return Anonymised(target, added, probes)
        probes = 2 * probes or 1
    return Anonymised(first, None, probes, tried=probes > 0)


def _summary(edges: EdgeList, degrees: np.ndarray, target_k: int) -> Anonymisation:
    found = anonymise_graph(edges, target_k)
    target = found.target
    raise_ = int((target - degrees).sum())
    raised = int(np.count_nonzero(target > degrees))
    tried = found.tried
    return Anonymisation(
        target_k=target_k,
        degree_raise=raise_,
        edges_to_add=raise_ // 2,
        nodes_raised=raised,
        k_after=k_degree(target),
        constructed=(found.added is not None) if tried else None,
        probes=found.probes,
    )


def construct(edges: EdgeList, raises: np.ndarray) -> list[tuple[int, int]] | None:
    """New edges (node ids) that give every node its raise, found greedily; None if the
    greedy choice gets stuck (see the module docstring)."""
    nodes = np.flatnonzero(raises > 0)
    left = raises[nodes].astype(np.int64)
    n = edges.nodes
    # Ties of the raise left go to the node of larger degree: it has more edges already, so
    # fewer partners left; served last, it finds them taken (measured: stuck on the 1 M-edge
    # bench graph with three hubs of raise 1 left, each joined to the others).
    degree = edges.degrees()[nodes]
    tie = degree.astype(np.float64) / (degree.max(initial=0) + 1.0)
    existing = edges.first * n + edges.second  # sorted
    partners: dict[int, list[int]] = {}  # positions in `nodes` already joined to a node
    new_edges: list[tuple[int, int]] = []
    while left.size and left.max() > 0:
        i = int(np.argmax(left + tie * (left > 0)))
        v = int(nodes[i])
        need = int(left[i])
        left[i] = 0
        free = left > 0
        free[partners.get(i, [])] = False  # joined by this construction already
        others = np.flatnonzero(free)
        pairs = np.minimum(nodes[others], v) * n + np.maximum(nodes[others], v)
        spot = np.searchsorted(existing, pairs)
        joined = (spot < existing.size) & (existing[np.minimum(spot, existing.size - 1)] == pairs)
        others = others[~joined]
        if others.size < need:
            return None
        chosen = others[np.argsort(-(left[others] + tie[others]), kind="stable")[:need]]
        left[chosen] -= 1
        for j in chosen.tolist():
            partners.setdefault(j, []).append(i)
            u = int(nodes[j])
            new_edges.append((min(u, v), max(u, v)))
    return new_edges
